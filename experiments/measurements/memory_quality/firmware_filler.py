"""The filler of the firmware generator (:mod:`.firmware`): what the user asks, the agent's replies, tool output.

Tool output comes in twelve formats, each a list of blocks (a block is a line or a few lines) a
planted statement can be put between: a UART boot log (``uart``), Yocto bitbake or Zephyr west
output (``build``), a devicetree fragment (``dts``), Kconfig/defconfig lines (``kconfig``), a CAN
candump (``candump``), an OpenOCD session (``jtag``), a BOM exported as CSV (``csv``), a bring-up
checklist in Markdown (``checklist``), a contract manufacturer's RMA email (``email``), a minified
JSON OTA manifest (``json``, its blocks members of one object on one line), a datasheet excerpt
(``datasheet``) and C source with comments (``c``). No filler line names a subject of the generator
or holds a value of a planted shape: no ``0x`` literals, no hex digests, no millisecond periods, no
weeks, prices, percentages with decimals, test points or board revisions.
"""

from __future__ import annotations

import random
from collections.abc import Callable

__all__ = ["TOOL_FORMATS", "FirmwareFiller"]

_HANDLES = ("jkeller", "abrandt", "haruto", "yui_n", "kmori", "omar.h", "ravi", "maja", "tprice", "lhoffmann")
_ASKS = ("the board resets right after the boot banner, can you read the console log?",
         "why does the west build pull a different module revision than last week?",
         "draft a reply to the factory about the returned units",
         "check the BOM export against what the distributor quoted",
         "summarise today's Mattermost thread for the hardware sync",
         "シリアルログを見て、どこで止まっているか教えてください",
         "kannst du dir den OpenOCD-Mitschnitt anschauen? der Debugger verliert immer die Verbindung",
         "go through the bring-up checklist and tell me what is still open")
_REPLIES_EN = ("I went through the whole console output; the reset comes from the brown-out detector, not a fault.",
               "The build only differs in the module hashes the manifest resolves; the sources are the same.",
               "Most warnings are deprecated devicetree bindings that the next rebase removes.",
               "The returned units share one date code, so I would ask the factory about that reel first.",
               "The bus is clean apart from a few error frames right after power-up.")
_REPLIES_DE = ("Ich habe das Log komplett gelesen, der Bootloader startet sauber.",
               "Die Warnungen kommen nur von den alten Bindings und stören den Build nicht.",
               "Auf dem Bus sehe ich keine Fehlerrahmen mehr seit dem Terminierungswiderstand.")
_REPLIES_JA = ("ログを確認しました。ブートローダーまでは正常です。", "警告は古いバインディングのものだけです。",
               "チェックリストの残りの項目をまとめました。")
_MODULES = ("hal_nordic", "hal_stm32", "mbedtls", "littlefs", "cmsis", "segger", "mcuboot", "tinycrypt")
_RECIPES = ("linux-yocto", "u-boot", "busybox", "openssl", "dropbear", "systemd", "swupdate", "wpa-supplicant")
_C_LINES = ("k_sleep(K_MSEC(POLL_INTERVAL));", "LOG_DBG(\"rx len %u\", len);", "if (ret < 0) { return ret; }",
            "gpio_pin_set_dt(&led, 1);", "atomic_set_bit(&flags, FLAG_READY);", "k_work_submit(&sample_work);")
_C_COMMENTS = ("/* the errata sheet says to read the register twice */", "/* TODO: drop once the respin lands */",
               "/* keep this short: it runs in interrupt context */", "/* see the bring-up thread from Monday */",
               "/* Werkseinstellung, nicht ändern */", "/* 量産前に削除すること */")
_C_FILES = ("src/main.c", "src/sensor.c", "drivers/pmic.c", "src/ota.c", "src/can_bridge.c", "src/power.c")
TOOL_FORMATS = ("uart", "build", "dts", "kconfig", "candump", "jtag", "csv", "checklist", "email", "json", "datasheet",
                "c")


class FirmwareFiller:
    """Seeded filler text of the firmware sessions."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def opening(self, chat_lines: int) -> list[str]:
        """The user's request and a few pasted Mattermost lines of teammates (``chat_lines`` of them)."""
        rng = self.rng
        lines = [rng.choice(_ASKS)]
        for _ in range(chat_lines):
            lines.append(f"{rng.choice(_HANDLES)} {rng.randrange(8, 19)}:{rng.randrange(60):02d} {rng.choice(_ASKS)}")
        return lines

    def reply(self) -> str:
        """The agent's reply before what it plants."""
        rng = self.rng
        pool = rng.choice((_REPLIES_EN, _REPLIES_EN, _REPLIES_DE, _REPLIES_JA))
        return " ".join(rng.sample(pool, min(len(pool), rng.randrange(2, 4))))

    def tool(self, fmt: str, size: int) -> tuple[str, dict[str, object], list[str]]:
        """A tool call's name and arguments and its output's blocks (about ``size`` bytes) in format ``fmt``."""
        name, args, line = getattr(self, f"_{fmt}")()
        blocks: list[str] = []
        while sum(len(b) + 1 for b in blocks) < size:
            blocks.append(line())
        return name, args, blocks

    @staticmethod
    def assemble(fmt: str, blocks: list[str]) -> str:
        """A tool's output from its blocks (the manifest's are members of one minified object, the BOM has a header)."""
        if fmt == "json":
            return '{"ota":{' + ",".join(blocks) + '},"format":2,"signer":"release-bot"}'
        if fmt == "csv":
            return "Ref,Part,Value,Qty,Note\n" + "\n".join(blocks)
        if fmt == "email":
            return "From: RMA desk, EMS partner\nSubject: Re: failure analysis of returned units\n\n" + "\n".join(blocks)
        return "\n".join(blocks)

    def _n(self, low: int, high: int) -> int:
        return self.rng.randrange(low, high)

    def _uart(self) -> tuple[str, dict[str, object], Callable[[], str]]:
        rng = self.rng

        def line() -> str:
            stamp = f"[00:00:{self._n(0, 60):02d}.{self._n(0, 1000):03d},{self._n(0, 1000):03d}]"
            return stamp + rng.choice((" <inf> main: sensors initialised", " <wrn> pm: regulator slow to settle",
                                       " <inf> bt_hci_core: HCI transport ready", " <err> flash: erase retried",
                                       f" <inf> net: link up after {self._n(2, 9)} tries", " <dbg> adc: calibration done"))
        return "serial_read", {"port": "/dev/ttyACM0", "baud": 115200}, line

    def _build(self) -> tuple[str, dict[str, object], Callable[[], str]]:
        rng = self.rng
        return "bash", {"command": "west build -p auto -b custom_board app && bitbake core-image-minimal"}, lambda: rng.choice((
            f"[{self._n(1, 300)}/{self._n(300, 400)}] Building C object zephyr/CMakeFiles/zephyr.dir/lib/os/cbprintf.c.obj",
            f"NOTE: recipe {rng.choice(_RECIPES)}: task do_compile: Succeeded",
            f"NOTE: Running task {self._n(100, 3000)} of {self._n(3000, 4000)} ({rng.choice(_RECIPES)}:do_install)",
            f"=== updating {rng.choice(_MODULES)} (modules/{rng.choice(_MODULES)}):",
            "warning: UART_CONSOLE (defined at drivers/console/Kconfig) was assigned but got another value",
            f"Memory region  FLASH: {self._n(100, 900)} KB used"))

    def _dts(self) -> tuple[str, dict[str, object], Callable[[], str]]:
        rng = self.rng
        return "read_file", {"path": "boards/custom/custom_board.dts"}, lambda: rng.choice((
            "&i2c1 {\n\tstatus = \"okay\";\n\tclock-frequency = <I2C_BITRATE_FAST>;\n};",
            "&uart0 {\n\tcurrent-speed = <115200>;\n\tpinctrl-names = \"default\", \"sleep\";\n};",
            "chosen {\n\tzephyr,console = &uart0;\n\tzephyr,shell-uart = &uart0;\n};",
            "/* leds are active low on this layout */",
            "&adc {\n\t#address-cells = <1>;\n\t#size-cells = <0>;\n};"))

    def _kconfig(self) -> tuple[str, dict[str, object], Callable[[], str]]:
        rng = self.rng
        return "read_file", {"path": "prj.conf"}, lambda: rng.choice((
            "CONFIG_LOG=y", f"CONFIG_MAIN_STACK_SIZE={rng.choice((2048, 4096))}", "# CONFIG_BT_DEBUG_LOG is not set",
            "CONFIG_MCUMGR=y", "CONFIG_WATCHDOG=y", f"CONFIG_LOG_BUFFER_SIZE={rng.choice((1024, 2048))}",
            "# keep the shell off in release builds"))

    def _candump(self) -> tuple[str, dict[str, object], Callable[[], str]]:
        rng = self.rng

        def frame() -> str:  # extended ids only, the planted frames use standard ones
            data = " ".join(f"{self._n(0, 100):02d}" for _ in range(8))
            return f"  can0  18FF{self._n(10, 99)}{self._n(10, 99)}   [8]  {data}"
        return "bash", {"command": "candump -t d can0"}, frame

    def _jtag(self) -> tuple[str, dict[str, object], Callable[[], str]]:
        rng = self.rng
        return "bash", {"command": "openocd -f interface/cmsis-dap.cfg -f target/board.cfg"}, lambda: rng.choice((
            "Info : CMSIS-DAP: SWD supported", "Info : clock speed 4000 kHz",
            "Info : Listening on port 3333 for gdb connections", "Warn : target was in unknown state when halt was requested",
            "> reset halt", "> resume", f"Info : SWD DPIDR confirmed after {self._n(2, 9)} retries"))

    def _csv(self) -> tuple[str, dict[str, object], Callable[[], str]]:
        rng = self.rng
        return "read_file", {"path": "hw/bom_export.csv"}, lambda: rng.choice((
            f"R{self._n(10, 99)},resistor,10k 1% 0402,{self._n(1, 9)},populate",
            f"C{self._n(10, 99)},capacitor,100n X7R 0402,{self._n(1, 20)},populate",
            f"J{self._n(1, 9)},connector,USB-C receptacle,1,populate",
            f"R{self._n(10, 99)},resistor,0R 0603,1,do not populate", f"LED{self._n(1, 9)},led,green 0603,1,populate"))

    def _checklist(self) -> tuple[str, dict[str, object], Callable[[], str]]:
        rng = self.rng
        return "read_file", {"path": "docs/bringup.md"}, lambda: rng.choice((
            "- [x] continuity on every rail before power-on", "- [ ] boot with the debugger detached",
            "- [x] console prints the banner", "- [ ] radio passes the conducted test",
            "- [ ] Standby-Strom messen", "- [x] 電源投入時の突入電流を確認"))

    def _email(self) -> tuple[str, dict[str, object], Callable[[], str]]:
        rng = self.rng
        return "read_email", {"folder": "manufacturing"}, lambda: rng.choice((
            "> Thank you for the updated test fixture files.", "> The failed units show a cold joint on the connector.",
            "> Please confirm whether we may rework the affected boards.", "Hallo zusammen, anbei der Prüfbericht.",
            "お世話になっております。不良解析の結果をお送りします。", "> Best regards, the quality team"))

    def _json(self) -> tuple[str, dict[str, object], Callable[[], str]]:
        rng = self.rng
        return "read_file", {"path": "ota/manifest.min.json"}, lambda: (
            f'"slot_{rng.choice(_MODULES)}_{self._n(100, 999)}":{{"state":"{rng.choice(("idle", "pending", "confirmed"))}",'
            f'"boot_count":{self._n(0, 4)}}}')

    def _datasheet(self) -> tuple[str, dict[str, object], Callable[[], str]]:
        rng = self.rng
        return "read_file", {"path": "docs/datasheet_excerpt.txt"}, lambda: rng.choice((
            "The device enters shutdown when the enable pin is held low.",
            "Absolute maximum ratings are stress ratings only; functional operation is not implied.",
            "Place the decoupling capacitor as close to the supply pin as possible.",
            "The internal oscillator is trimmed at the factory.", "Figure 12 shows the recommended land pattern."))

    def _c(self) -> tuple[str, dict[str, object], Callable[[], str]]:
        rng = self.rng

        def chunk() -> str:  # a few lines of one source file with a comment
            return "\n".join([f"/* {rng.choice(_C_FILES)} */", *rng.sample(_C_LINES, 2), rng.choice(_C_COMMENTS)])
        return "read_file", {"path": "app/src"}, chunk
