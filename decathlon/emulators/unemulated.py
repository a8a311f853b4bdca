"""The vendors the tasks' scripts reach that no emulator answers yet, and how their code shows it (read by
decathlon.sandbox.reach). When an emulator comes for one, its System moves into that emulator's descriptor
(decathlon.emulators.<name>.vendor) and out of here."""
from decathlon.emulators.vendor import System

SYSTEMS: tuple[System, ...] = (
    # Workspace: Drive, Sheets, Forms, Calendar, Gmail, YouTube. A scope URL (www.googleapis.com/auth/…) is no request.
    System("google-workspace", "Google Workspace",
           modules=("googleapiclient", "gspread", "pydrive", "pydrive2", "google_auth_oauthlib"),
           hosts=(r"(?:sheets|drive|docs|forms|calendar|gmail|people|script|youtube)\.googleapis\.com",
                  r"www\.googleapis\.com/(?!auth\b)", r"docs\.google\.com/forms", r"forms\.gle/"),
           apis=("drive", "sheets", "forms", "calendar", "gmail", "docs", "people", "script", "youtube"), front=True),
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
