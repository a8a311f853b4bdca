"""Google Workspace: Drive v3, Sheets v4, Forms v1 and Calendar v3, and the public pages of docs.google.com and
forms.gle."""
from decathlon.emulators.vendor import Host, SeedSource, System, Vendor

VENDOR = Vendor(
    name="workspace",
    title="Google Workspace (Drive, Sheets, Forms, Calendar)",
    reach="front",
    protocol="REST",
    hosts=(Host("www.googleapis.com"), Host("sheets.googleapis.com"), Host("forms.googleapis.com"),
           Host("docs.google.com"), Host("forms.gle")),
    servers=("google_sheet", "google_forms", "google_calendar"),
    systems=(
        # googleapiclient reaches what its build("<api>", …) names (decathlon.sandbox.reach); gspread is Sheets and
        # Drive. Gmail, Docs, YouTube and the rest of Google's APIs stay unemulated (decathlon.emulators.unemulated).
        System("google-drive", "Google Drive", modules=("gspread",),
               hosts=(r"www\.googleapis\.com/(?:upload/)?drive/", r"docs\.google\.com/spreadsheets"),
               apis=("drive",), emulator="workspace", front=True),
        System("google-sheets", "Google Sheets", hosts=(r"sheets\.googleapis\.com",), apis=("sheets",),
               emulator="workspace", front=True),
        System("google-forms", "Google Forms", hosts=(r"forms\.googleapis\.com", r"docs\.google\.com/forms",
                                                      r"forms\.gle/"),
               apis=("forms",), emulator="workspace", front=True),
        System("google-calendar", "Google Calendar", hosts=(r"www\.googleapis\.com/calendar/",),
               apis=("calendar",), emulator="workspace", front=True),
    ),
    # Signed in with the OAuth user credentials the gcp vendor writes (google_credentials.json), refreshed, if ever,
    # at oauth2.googleapis.com, which the gcp emulator answers.
    credentials=None,
    # The Calendar server's sign-in (~/.calendar-mcp as Toolathlon's global preparation fills it: the OAuth client and
    # a copy of google_credentials.json), named by the variables it reads before its folder.
    sign_in=(("gcp-oauth.keys.json", "decathlon.emulators.gcp.credentials:oauth_client"),
             ("calendar-credentials.json", "decathlon.emulators.gcp.credentials:authorized_user")),
    episode_env=(("CALENDAR_OAUTH_PATH", "{sign_in}/gcp-oauth.keys.json"),
                 ("CALENDAR_CREDENTIALS_PATH", "{sign_in}/calendar-credentials.json")),
    seeds=(
        # A template the preprocess copies from the task authors' Drive (drive_helper.copy_sheet_to_folder): its
        # Drive file and its content, each as Google answers a reader.
        SeedSource("spreadsheet", r"docs\.google\.com/spreadsheets/d/([A-Za-z0-9_-]{25,})",
                   (("drive/{id}.json", "https://www.googleapis.com/drive/v3/files/{id}?fields=*&supportsAllDrives=true"),
                    ("sheets/{id}.json", "https://sheets.googleapis.com/v4/spreadsheets/{id}?includeGridData=true"))),
    ),
    surface="Drive v3 (files with the search language, copy, upload, permissions), Sheets v4 (values, batchUpdate, "
            "copyTo), Forms v1 (create, batchUpdate, responses), Calendar v3 events on primary, the viewform pages "
            "and forms.gle links",
    describes="Google's discovery documents (google-api-python-client): drive v3, sheets v4, forms v1, calendar v3",
    notes=("One signed-in user: any non-empty Bearer token is theirs (Google's tokens cannot be checked offline); "
           "a request without one is Google's 401.",
           "The account's locale is zh_CN, as in the recorded runs: a new spreadsheet's first sheet is `工作表1`.",
           "Formulas keep their text; only arithmetic, references and SUM/AVERAGE/MIN/MAX/COUNT/COUNTA/ROUND/ABS/IF "
           "get a value.",
           "A form's public page lists its questions but takes no submissions."),
)
