"""The vendors the tasks' scripts reach that no emulator answers yet, and how their code shows it (read by
decathlon.sandbox.reach). When an emulator comes for one, its System moves into that emulator's descriptor
(decathlon.emulators.<name>.vendor) and out of here."""
from decathlon.emulators.vendor import System

SYSTEMS: tuple[System, ...] = (
    # Google's APIs beside Drive, Sheets, Forms and Calendar (decathlon.emulators.workspace): Gmail, Docs, YouTube…;
    # pydrive speaks Drive v2, which the emulator does not; an interactive sign-in needs a browser; Google's generic
    # client building no API by name could be building any. A scope URL (www.googleapis.com/auth/…) is no request.
    System("google-workspace", "Google Workspace (Gmail, Docs, YouTube, Drive v2)",
           modules=("googleapiclient", "pydrive", "pydrive2", "google_auth_oauthlib"),
           hosts=(r"(?:drive|docs|gmail|people|script|youtube|calendar)\.googleapis\.com",
                  r"www\.googleapis\.com/(?!auth\b|(?:upload/)?drive/v3\b|calendar/v3\b|oauth2\b)"),
           apis=("gmail", "docs", "people", "script", "youtube"), front=True),
    System("google-maps", "Google Maps Platform", modules=("googlemaps",), hosts=(r"maps\.googleapis\.com",), front=True),
    System("github", "GitHub", modules=("github",),
           hosts=(r"api\.github\.com", r"@github\.com\b", r"raw\.githubusercontent\.com", r"https://github\.com/[^\s'\"]*\.git\b")),
    System("notion", "Notion", modules=("notion_client",), hosts=(r"api\.notion\.com",)),
    System("huggingface", "Hugging Face Hub", modules=("huggingface_hub",), hosts=(r"huggingface\.co\b",)),
    System("wandb", "Weights & Biases", modules=("wandb",), hosts=(r"api\.wandb\.ai",)),
    System("yahoo-finance", "Yahoo Finance", modules=("yfinance",), hosts=(r"finance\.yahoo\.com",)),
    System("arxiv", "arXiv", modules=("arxiv",), hosts=(r"export\.arxiv\.org",)),
    System("rail-12306", "the 12306 rail service", hosts=(r"12306\.cn",)),
    System("web-browser", "the live web, through a browser", modules=("playwright", "selenium")),
    System("kubernetes", "a Kubernetes cluster (kind)", modules=("kubernetes",),
           text=(r"\bkubectl\b", r"\bkind\s+(?:create|delete|get|load)\b", r"\bhelm\s+(?:install|upgrade|repo)\b")),
)
