"""The recall benchmark's styled question wordings (:mod:`recall_workload` asks them of the held-out facts).

Each split past ``held_out`` asks every held-out fact once more per wording, in a style written
at one phase of the work: :data:`FRESH` (phase 4), :data:`BLIND` (phase 6), :data:`BLIND2` (phase
7), :data:`BLIND3` (phase 9, a development split of the fusion from phase 10), :data:`BLIND4`
(phase 10, a development split from phase 11), :data:`BLIND5` (phase 11, written blind, asked by
no development split) and :data:`BLIND6` (phase 12, written blind after BLIND5 proved too easy:
held out, asked by no development split). A wording is a pair (English, Chinese) per kind,
filled from the fact's slots (``{s}``, ``{env}``, ``{proto}``, ``{bug}``, ``{topic}``, ``{lib}``
...). :data:`STYLED` lists them with their split names in the order the questions are built.
They live apart from the workload's generator so the generator stays one job, and so a new
wording is added here without touching how facts are written.
"""

from __future__ import annotations

__all__ = ["BLIND", "BLIND2", "BLIND3", "BLIND4", "BLIND5", "BLIND6", "FRESH", "STYLED"]

#: The ``fresh`` questions: a third wording per kind (en, zh), written in phase 4 before any tuning
#: and never tuned on, in a style the other wordings do not use (terse, chatty, other relation
#: words: "sha", "route", "connection string"). Asked only of held-out facts, in the statement's
#: language (``paraphrase``) and in the other one (``other_language``); reported as split ``fresh``.
FRESH: dict[str, tuple[str, str]] = {
    "env": ("remind me, the {s} box on {env}: what {proto} connection string is it wired to", "{s} 那个{env_zh}的 {proto} 连接串给我一下"),
    "branch": ("quick q: {s} ships off which git branch these days?", "{s} 现在从哪个 git 分支出包？"),
    "commit": ("need the sha that sorted out the {bug} on {s}", "{s} 里 {bug} 那次修好用的 sha 是啥"),
    "ticket": ("{topic} on {s}, got an issue number for that?", "{s} {topic} 对应的 issue 号是多少"),
    "endpoint": ("{s} liveness probe: what route do we hit?", "{s} 的存活探针打的是哪个路由"),
    "pin": ("{s} is stuck on what {lib} exactly?", "{s} 用的 {lib} 具体是几点几版"),
    "preference": ("anything to keep in mind about how the user wants {s} handled?", "做 {s} 的时候用户有什么习惯要注意"),
    "decision": ("remind me what we went with for {s} and the reasoning behind it", "{s} 当初选型的结论和理由是什么"),
}

#: The ``blind`` questions: a fourth wording per kind (en, zh), written in phase 6 before the
#: rerank of the keyword engine was developed, and never looked at question by question until the
#: work was done. Their shape differs from every other wording: a task the asker is in the middle
#: of, then what they are missing, with none of the template's relation words (no "release
#: branch", "health check", "commit", "ticket", "pins", "prefers", "decided", no env key).
#: Asked of the held-out facts as :data:`FRESH` is; reported as split ``blind``.
BLIND: dict[str, tuple[str, str]] = {
    "env": ("Writing up the {env} runbook for {s} and I'm missing where its {proto} data lives.",
            "在写 {s} 的{env_zh}运维手册，它的 {proto} 数据放在哪儿还空着"),
    "branch": ("Before I tag the next {s} build I have to check out the right line. Which one is it?",
               "给 {s} 打下一个包之前要先切到对的那条线，是哪条"),
    "commit": ("The {bug} is back on {s} in my fork, point me at the change that cured it last time.",
               "我这边 {s} 又出现了 {bug}，上次治好它的那个改动是哪一个"),
    "ticket": ("Going to post an update about {topic} for {s}; what reference goes in the title?",
               "要发 {s} 的 {topic} 进展，标题里该挂哪个号"),
    "endpoint": ("Setting up uptime monitoring for {s}, so what should the pinger request?",
                 "给 {s} 配可用性监控，监控程序该请求哪个地址"),
    "pin": ("Our {lib} inside {s} is frozen at some exact number. Which one?",
            "{s} 里的 {lib} 冻结在哪一版上"),
    "preference": ("About to open a PR against {s}. Did the user ask for any particular way of working?",
                   "改 {s} 之前想确认一下，用户对做法提过什么没有"),
    "decision": ("Someone asked me why {s} runs on what it runs on. What do I tell them?",
                 "有人问 {s} 为什么用现在这一套，我该怎么回答"),
}

#: The ``blind2`` questions: a fifth wording per kind (en, zh), written in phase 7 before any
#: ranking change of that phase and not looked at question by question until its work was done.
#: An agent's aside in the middle of a task that names the consequence (a restart loop, a fix
#: that will not ship, a review bounced, a revert that would bring a bug back) or asks to be
#: reminded, instead of the fact: none of the other wordings' shapes ("which X is Y", "a task,
#: then what is missing", terse chat), none of their relation words. Asked of the held-out facts
#: as :data:`FRESH` is; reported as split ``blind2``.
BLIND2: dict[str, tuple[str, str]] = {
    "env": ("{s} on {env} times out opening its {proto} pool at boot, so what did we configure it to dial?",
            "{s} 在{env_zh}启动时打开 {proto} 连接池超时了，我们当时给它配的要拨到哪里"),
    "branch": ("A fix for {s} got merged somewhere that won't go out with the next version. Where should it have landed?",
               "{s} 的一个修复合进去了却不会跟着下个版本发出去，本该合到哪儿"),
    "commit": ("If I revert the wrong thing in {s} the {bug} comes back. Which revision has to stay in?",
               "在 {s} 里要是回退错了东西，{bug} 就会复发，哪个版本号必须留着"),
    "ticket": ("Remind me what to put in the changelog so readers can look up {topic} on {s}.",
               "提醒我一下，更新日志里写什么才能让人查到 {s} 的 {topic}"),
    "endpoint": ("The orchestrator keeps restarting {s} because its readiness request gets a 404. What should it be asking for?",
                 "编排器一直在重启 {s}，因为探活请求返回 404，它应该访问什么"),
    "pin": ("pip refuses to give {s} a newer {lib}; what exact number is it held to?",
            "pip 不肯给 {s} 装更新的 {lib}，它被限定在哪个确切的号上"),
    "preference": ("My last change to {s} was bounced for style. Remind me what the user insists on there.",
                   "我上次给 {s} 的改动因为风格被退回了，提醒我用户在那里坚持什么"),
    "decision": ("If someone proposes ripping out the stack under {s}, what argument kept it as it is?",
                 "要是有人提议把 {s} 底下的技术栈推倒重来，当初让它保持现状的理由是什么"),
}


#: The ``blind3`` questions: a sixth wording per kind (en, zh), written blind in phase 9 (without
#: reading the recall engines or their reranks, and never run through one while written). The
#: voice is a go-between relaying someone else's half-remembered request (a colleague, a lead, a
#: contractor): who asked, what they vaguely recall, then the ask, with none of the template's
#: relation words and none of the earlier wordings' shapes. Asked of the held-out facts as
#: :data:`FRESH` is; reported as split ``blind3``, held out (no development split asks it).
BLIND3: dict[str, tuple[str, str]] = {
    "env": ("Dana from support says {s} in {env} cannot find its {proto} backend and asked me to pass on what it is supposed to talk to; she did not remember the details.",
            "客服那边的同事说{env_zh}的 {s} 找不到它的 {proto} 后端，托我问一下它本来应该连去哪里"),
    "branch": ("Someone on the mobile team half-remembers that {s} has one particular line new work must merge into before it goes out. Do you know which?",
               "移动端的同事隐约记得 {s} 有一条专门用来出版本的线，新代码得先合进去，是哪一条"),
    "commit": ("A colleague told me the {bug} in {s} was sorted out by one specific change a while ago, but she could not recall its identifier. Which was it?",
               "同事说 {s} 的 {bug} 之前是某一次改动搞定的，可她想不起那个标识了，是哪个"),
    "ticket": ("My lead wants to look into {topic} for {s} and is sure there is a reference number for it somewhere. What is it?",
               "组长让我查一下 {s} 那件{topic}的事对应的号码，他记得有但忘了是几号"),
    "endpoint": ("The network folks are setting up a prober for {s}; they think there is some short path that says whether it is up, but forgot which.",
                 "网络组的人说要知道 {s} 还在不在得访问一个短路径，他们忘了是哪个"),
    "pin": ("A data engineer rebuilding {s} on her laptop was told to install one exact {lib} release, not the latest. Which one did she mean?",
            "有个数据工程师在本地重建 {s}，有人跟她讲过 {lib} 只能装某个特定的号、不能装最新的，是哪个"),
    "preference": ("A new contractor is picking up {s} and heard the user is particular about how things get done there. What did the user ask for?",
                   "新来的外包要接手 {s}，听说用户对这边的做法有讲究，用户具体要的是什么"),
    "decision": ("Our director asked in the budget review why {s} is built on what it is built on and what the rationale was. Can you give me the short version?",
                 "总监在预算评审上问 {s} 当初凭什么选了现在这套、依据是什么，帮我概括一下"),
}


#: The ``blind4`` questions: a seventh wording per kind (en, zh), written blind in phase 10 (without
#: reading the recall engines or their reranks, and never run through one). The voice is a newcomer
#: from another shop who asks in that shop's jargon (Perforce streams and changelists, Bugzilla
#: cases, heartbeat paths, Maven coordinates, house rules, ADRs), says so, and describes what the
#: thing is for: the wrong names for the right things, none of the template's relation words and
#: none of the earlier wordings' shapes. Asked of the held-out facts as :data:`FRESH` is; reported
#: as split ``blind4``, held out (no development split asks it).
BLIND4: dict[str, tuple[str, str]] = {
    "env": ("I come from a Perforce shop, so bear with my words: on {env}, what {proto} target does {s} get handed as its secret?",
            "我之前待的是用 Perforce 的团队，叫法可能不对：{env_zh}上 {s} 拿到的那个 {proto} 密钥串指向哪里"),
    "branch": ("Where I worked before we had a stream that only shippable work went into. For {s}, what is that stream called in your git?",
               "按老东家的说法叫出货流，{s} 的出货流在这边 git 里叫什么名字"),
    "commit": ("We said changelist at my last place: which changelist got {s} over the {bug}?",
               "以前我们叫变更单，{s} 的 {bug} 是哪张变更单搞定的"),
    "ticket": ("Which Bugzilla case, or whatever you call those here, covers {topic} on {s}?",
               "{s} 的 {topic} 在这边的缺陷库里是哪个案例号"),
    "endpoint": ("What is the heartbeat path of {s}, the one a watchdog GETs to see that it is still breathing?",
                 "{s} 的心跳路径是哪个，就是看门狗拿来确认它还活着的那个"),
    "pin": ("In Maven land we'd call it the golden coordinate: where is the {lib} of {s} nailed down?",
            "用 Maven 的话讲，{s} 里 {lib} 的黄金坐标钉在哪个号上"),
    "preference": ("Are there house rules the user laid down for {s}? My old lead called them style contracts.",
                   "用户给 {s} 立过什么家规没有？我以前的组长管这个叫风格契约"),
    "decision": ("Is there an ADR for the stack under {s}? I mean what got picked over the alternative, and on what grounds.",
                 "{s} 底下那套技术栈有没有 ADR？就是当时挑了哪个、放弃了哪个、凭什么"),
}
#: The ``blind5`` questions: an eighth wording per kind (en, zh), written blind in phase 11 (without
#: reading the recall engines or their reranks, nor any earlier run's misses, and never run through
#: an engine but to check the questions are built). The voice is someone filling in a form (an
#: inventory sheet, a runbook step, a postmortem box, a status table, an audit row, a checklist
#: line, an architecture record) who quotes the form's label and leaves a blank ``____`` where the
#: fact goes: a label and a gap instead of a question, none of the template's relation words and
#: none of the earlier wordings' shapes. Asked of the held-out facts as :data:`FRESH` is; reported
#: as split ``blind5``, held out (no development split asks it).
BLIND5: dict[str, tuple[str, str]] = {
    "env": ("Inventory sheet for {env}, row {s}, column '{proto} address': ____ (I need what goes in the cell).",
            "{env_zh}资产清单里 {s} 那一行，'{proto} 地址' 一栏空着：____，该填什么"),
    "branch": ("Shipping runbook for {s}, step 2 reads 'cut the build from ____'. What goes in the gap?",
               "{s} 的出包手册第二步写着'从 ____ 切出构建'，空格里该填什么"),
    "commit": ("Postmortem template for {s}, box 'revision that cured the {bug}': ____. Can you fill it?",
               "{s} 的复盘模板里，'治好{bug}的那个修订' 一格还是 ____，帮我填上"),
    "ticket": ("Weekly status table, row {s} / {topic}, reference column: ____. What do I write there?",
               "周报表里 {s} / {topic} 那一行的编号列是 ____，我该写什么"),
    "endpoint": ("Uptime form for {s}, field 'URL the poller requests to see it alive': ____.",
                 "{s} 的可用性登记表，'轮询器请求哪个地址来判断它活着' 一栏：____"),
    "pin": ("Dependency audit, {s}: {lib} == ____ (the exact number we hold it at). Fill the blank?",
            "{s} 的依赖审计表：{lib} == ____，填我们卡住的那个确切的号"),
    "preference": ("Reviewer checklist for {s}, line 'what the user wants in every change': ____.",
                   "{s} 的评审清单里 '用户对每次改动的要求' 那一行：____"),
    "decision": ("Architecture record for {s}: chosen ____, passed over ____, because ____. Fill the three blanks.",
                 "{s} 的架构记录：选了 ____，没选 ____，理由 ____，三个空帮我填上"),
}


#: The ``blind6`` questions: a ninth wording per kind (en, zh), written blind in phase 12 (without
#: reading the recall engines or their reranks, nor any earlier run's misses, and never run through
#: an engine but to check the questions are built and to report its figures). The voice is a
#: longer chat message (news, thanks, an apology for its length) with the ask folded into it as an
#: indirect request ("it would help to know...", "could you dig out..."), put by someone who knows
#: what the thing is for or what went wrong but not its name: traffic a service sends, the strand
#: of history customer builds come from, what put an end to a bug, the number auditors should
#: search for, the path a robot calls every minute, the older one a service is held back on, how
#: the user wants work shaped, what tipped the balance. None of the template's or the fact
#: statement's relation words (English or Chinese) and none of the earlier wordings' shapes; it
#: names the subject and the slots that tell one fact of a kind from another (the environment and
#: protocol, the bug, the topic, the library). Asked of the held-out facts as :data:`FRESH` is;
#: reported as split ``blind6``, held out (no development split asks it).
BLIND6: dict[str, tuple[str, str]] = {
    "env": ("Morning! Thursday's demo of {s} is on track and the slides are nearly done. The one gap left is the {env} page: "
            "if you can dig up where {s} sends its {proto} traffic over there, drop it in the doc. Thanks, and enjoy the weekend.",
            "早！周四 {s} 的演示准备得差不多了，幻灯片也快做完。就差{env_zh}那一页：麻烦查一下 {s} 在那边的 {proto} "
            "流量是发到哪台机器上的，填进文档就行。谢谢，周末愉快。"),
    "branch": ("Thanks again for the review yesterday! Next up I'm packaging {s} for customers, and I'd rather not guess which "
               "strand of git history the customer builds come from. If you remember its name, put it in your reply; after lunch is fine.",
               "昨天谢谢你帮忙看代码！接下来我要给客户打 {s} 的包，不想瞎猜：给客户的构建是从 git 历史里的哪一股拉出来的？"
               "记得名字的话回复里写一下，午饭后再回也行。"),
    "commit": ("Bit of a long one, sorry. The on-call rota is sorted and the wiki is up to date. Meanwhile a customer is seeing "
               "what looks like the {bug} again on {s}; it would help a lot to know which exact change put an end to it the "
               "first time, so I can compare it with what is deployed. Its identifier is enough.",
               "有点长，抱歉。值班表排好了，wiki 也更新了。另外有个客户在 {s} 上又碰到了像是 {bug} 的情况；要是能知道当初"
               "到底是哪一次改动让它消失的就好了，我好跟线上部署的对比一下。给个标识就够。"),
    "ticket": ("Hi! Finance signed off on the new quotas, so that's one thing off the list. Separately, the auditors want to "
               "follow the paper trail on {topic} in {s}; I'd be grateful if you could send me whatever number they should "
               "type into the search box of our bug system.",
               "嗨！财务批了新的配额，又少一件事。另外审计想顺着 {s} 的 {topic} 查来龙去脉，麻烦把他们该在缺陷系统搜索框里"
               "输入的那个编号发我一下。"),
    "endpoint": ("Onboarding with the new hosting provider is going fine, the DNS moved yesterday. They now ask, for {s}, "
                 "which web path their robot should call every minute to learn that it has not fallen over; would you mind "
                 "digging that out for me?",
                 "新托管商的接入挺顺利，DNS 昨天已经切过去了。他们现在问 {s} 该让他们的机器人每分钟访问哪个网页路径，"
                 "才能知道它没挂；能帮我翻出来吗？"),
    "pin": ("My laptop died, so I'm setting up {s} from scratch on a new one; the rest went smoothly. Before I run the "
            "installer: if I let it grab the newest {lib}, I suspect things break, since I remember {s} being held back on "
            "an older one. Which exact one should I ask for?",
            "笔记本坏了，我在新电脑上从头搭 {s}，其他都还顺利。跑安装之前想确认：要是让它装最新的 {lib} 估计会出问题，"
            "我记得 {s} 一直停在一个旧的上。具体该装哪一个？"),
    "preference": ("First week on {s}, and people have been lovely. My buddy mentioned in passing that the user has a strong "
                   "opinion on how work in {s} should be shaped, and I'd hate to step on it in my first patch; could you "
                   "remind me what it was?",
                   "这是我在 {s} 的第一周，大家都很友好。带我的同事顺口提到用户对 {s} 的活儿该怎么干有很明确的看法，"
                   "我不想第一个补丁就踩雷，能提醒我一下是什么吗？"),
    "decision": ("Writing the quarterly summary now, mostly numbers. One paragraph has to explain, for a non-technical reader, "
                 "what {s} ended up built on rather than its rival and what tipped the balance; could you list the two or "
                 "three facts I need for it?",
                 "在写季度总结，大部分是数字。其中一段要给不懂技术的人讲清楚 {s} 最后建在哪套东西上、落选的另一套是什么、"
                 "是什么让天平倾斜的；能帮我凑齐这几条吗？"),
}


#: Every styled wording with the split it is reported as, in the order the questions are built (the
#: order is part of a seed's question list: a new wording goes last).
STYLED: tuple[tuple[str, dict[str, tuple[str, str]]], ...] = (
    ("fresh", FRESH), ("blind", BLIND), ("blind2", BLIND2), ("blind3", BLIND3), ("blind4", BLIND4), ("blind5", BLIND5),
    ("blind6", BLIND6))
