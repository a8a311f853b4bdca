"""Sheets v4: spreadsheets and their values, kept as Sheets' own JSON."""
