// The "bad ports" of the Fetch standard (https://fetch.spec.whatwg.org/#port-blocking, as of its 2025
// revision, which added port 0): ports of other protocols (mail, FTP, SSH, IRC, X11...) an HTTP request
// must never reach. Kept here as data so the sender refuses them itself, before any connection.

/** Port numbers, as `URL.port` spells them, that deliveries never contact. */
export const blockedPorts: ReadonlySet<string> = new Set(
  [
    0, 1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101, 102, 103, 104, 109,
    110, 111, 113, 115, 117, 119, 123, 135, 137, 139, 143, 161, 179, 389, 427, 465, 512, 513, 514, 515, 526, 530, 531,
    532, 540, 548, 554, 556, 563, 587, 601, 636, 989, 990, 993, 995, 1719, 1720, 1723, 2049, 3659, 4045, 4190, 5060,
    5061, 6000, 6566, 6665, 6666, 6667, 6668, 6669, 6679, 6697, 10080,
  ].map(String),
);
