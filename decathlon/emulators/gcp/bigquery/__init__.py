"""BigQuery v2 REST on an in-memory DuckDB: datasets are schemas named `project:dataset`, GoogleSQL is
transpiled with sqlglot, and the BigQuery schema (types, modes, descriptions) is kept beside DuckDB's."""
