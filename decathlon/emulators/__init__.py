"""Local stand-ins for the applications Toolathlon runs as shared containers (Poste.io mail, Canvas LMS,
WordPress + WooCommerce), started per episode inside the sandbox at the ports the tasks expect.

`directory` reads the accounts every service knows (the checkout's configs/users_data.json);
`mail`, `canvas` and `woocommerce` are the services; `supervisor` starts the ones an episode needs.
"""
