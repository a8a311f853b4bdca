"""Reading run folders and recorded runs into figures (Pass@k, timings) and the results page."""
