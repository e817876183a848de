"""Japanese and Korean words for the token corpus's CJK kinds, written for it: (English, word) pairs.

The standard library ships no Japanese or Korean text and CC-CEDICT is Chinese, so these lists,
part of the repository, keep the corpus the same on every machine. They mix the vocabulary of a
coding session (files, errors, settings) with place and person names and everyday words, in
kanji, kana and hangul, so the characters are as common and as rare as session text makes them.
"""

from __future__ import annotations

__all__ = ["JAPANESE", "KOREAN"]

JAPANESE = (
    ("file", "ファイル"), ("setting", "設定"), ("error", "エラー"), ("test", "テスト"), ("server", "サーバー"),
    ("database", "データベース"), ("user", "ユーザー"), ("password", "パスワード"), ("directory", "ディレクトリ"),
    ("function", "関数"), ("variable", "変数"), ("memory", "メモリ"), ("log", "ログ"), ("network", "ネットワーク"),
    ("interface", "インターフェース"), ("cache", "キャッシュ"), ("version", "バージョン"), ("library", "ライブラリ"),
    ("Tokyo", "東京"), ("Osaka", "大阪"), ("Kyoto", "京都"), ("Hokkaido", "北海道"), ("Okinawa", "沖縄"),
    ("Yokohama", "横浜"), ("Nagoya", "名古屋"), ("Fukuoka", "福岡"), ("Sapporo", "札幌"), ("Kobe", "神戸"),
    ("Tanaka", "田中"), ("Suzuki", "鈴木"), ("Sato", "佐藤"), ("Takahashi", "高橋"), ("Watanabe", "渡辺"),
    ("Yamamoto", "山本"), ("Nakamura", "中村"), ("Kobayashi", "小林"), ("Ito", "伊藤"), ("Kato", "加藤"),
    ("weather", "天気"), ("station", "駅"), ("hospital", "病院"), ("school", "学校"), ("company", "会社"),
    ("meeting", "会議"), ("schedule", "予定"), ("report", "報告書"), ("customer", "顧客"), ("invoice", "請求書"),
    ("progress", "進捗"), ("deadline", "締め切り"), ("specification", "仕様書"), ("bug", "不具合"),
    ("fix", "修正"), ("release", "リリース"), ("permission", "権限"), ("authentication", "認証"),
    ("encryption", "暗号化"), ("backup", "バックアップ"), ("restore", "復元"), ("timeout", "タイムアウト"),
    ("cherry blossom", "桜"), ("breakfast", "朝ご飯"), ("weekend", "週末"), ("holiday", "休日"),
    ("Mount Fuji", "富士山"), ("Shinkansen", "新幹線"), ("convenience store", "コンビニ"), ("smartphone", "スマートフォン"),
)

KOREAN = (
    ("file", "파일"), ("setting", "설정"), ("error", "오류"), ("test", "테스트"), ("server", "서버"),
    ("database", "데이터베이스"), ("user", "사용자"), ("password", "비밀번호"), ("directory", "디렉터리"),
    ("function", "함수"), ("variable", "변수"), ("memory", "메모리"), ("log", "로그"), ("network", "네트워크"),
    ("interface", "인터페이스"), ("cache", "캐시"), ("version", "버전"), ("library", "라이브러리"),
    ("Seoul", "서울"), ("Busan", "부산"), ("Incheon", "인천"), ("Daegu", "대구"), ("Daejeon", "대전"),
    ("Gwangju", "광주"), ("Ulsan", "울산"), ("Jeju", "제주도"), ("Suwon", "수원"), ("Gangneung", "강릉"),
    ("Kim", "김민준"), ("Lee", "이서연"), ("Park", "박지훈"), ("Choi", "최수빈"), ("Jung", "정예은"),
    ("Kang", "강도윤"), ("Cho", "조하은"), ("Yoon", "윤시우"), ("Jang", "장지민"), ("Lim", "임채원"),
    ("weather", "날씨"), ("station", "역"), ("hospital", "병원"), ("school", "학교"), ("company", "회사"),
    ("meeting", "회의"), ("schedule", "일정"), ("report", "보고서"), ("customer", "고객"), ("invoice", "청구서"),
    ("progress", "진행 상황"), ("deadline", "마감일"), ("specification", "명세서"), ("bug", "버그"),
    ("fix", "수정"), ("release", "배포"), ("permission", "권한"), ("authentication", "인증"),
    ("encryption", "암호화"), ("backup", "백업"), ("restore", "복원"), ("timeout", "시간 초과"),
    ("kimchi", "김치"), ("breakfast", "아침 식사"), ("weekend", "주말"), ("holiday", "휴일"),
    ("Han River", "한강"), ("subway", "지하철"), ("convenience store", "편의점"), ("smartphone", "스마트폰"),
)
