"""Google Workspace: Drive v3, Sheets v4, Forms v1 and Calendar v3 over one Drive store, and the public pages of
docs.google.com and forms.gle that a form's links lead to."""
