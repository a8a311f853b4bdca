"""Drive v3: files, their search language, and permissions."""
