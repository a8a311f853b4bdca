"""Poste.io's mail, as upstream's deployment runs it."""
from decathlon.emulators.vendor import System, Vendor

VENDOR = Vendor(
    name="mail",
    title="the mail server (IMAP 1143, SMTP 1587 and 2525)",
    reach="service",
    protocol="IMAP, SMTP",
    ports=(1143, 1587, 2525),
    servers=("emails",),
    systems=(System("mail", "mail (IMAP/SMTP)", modules=("imaplib", "smtplib", "aiosmtplib", "imapclient"),
                    service="mail"),),
    surface="IMAP4rev1 (pymap) and SMTP (aiosmtpd) over one store, the accounts of configs/users_data.json",
)
