"""Snowflake, at every account's host name."""
from decathlon.emulators.vendor import Credentials, Host, System, Vendor

VENDOR = Vendor(
    name="snowflake",
    title="Snowflake",
    reach="front",
    protocol="Snowflake REST",
    hosts=(Host("*.snowflakecomputing.com"),),
    servers=("snowflake",),
    systems=(System("snowflake", "Snowflake", modules=("snowflake",), hosts=(r"snowflakecomputing\.com",),
                    emulator="snowflake", front=True),),
    credentials=Credentials(
        writer="decathlon.emulators.snowflake.credentials:write",
        tokens="decathlon.emulators.snowflake.credentials:tokens",
        files=("snowflake_rsa_key.p8",), token_files=("snowflake_private_key_path",),
        real_files=("configs/snowflake_rsa_key.p8",)),
    # The connector first fetches an OCSP response cache over plain HTTP (ocsp.<domain>), which nothing answers in
    # an episode; fail-open, it then sleeps 1 s and goes on, in every process that connects. Its own switch skips
    # the fetch, as with a proxy that blocks it.
    episode_env=(("SF_OCSP_RESPONSE_CACHE_SERVER_ENABLED", "false"),),
    surface="the connector's REST protocol (login, query, stages), SQL on DuckDB through fakesnow",
)
