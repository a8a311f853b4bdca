"""Cloud Storage: the JSON API (buckets, objects, uploads) and the XML-style media path."""
