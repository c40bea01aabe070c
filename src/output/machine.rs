//! Which machine a report comes from, beside its host name: two machines cloned from one image
//! often keep one host name (`debian`, `localhost`), and `mcp-deploy report` would take the
//! newer one's report for both, the other's failure hidden as "superseded". The machine is
//! told by `/etc/machine-id`, which systemd-based systems set once per installation, but never
//! that id itself: the systemd documentation asks that it not be exposed, and a report is
//! copied to a controller and archived. A report carries the id systemd derives from it for
//! one application instead — `sd_id128_get_machine_app_specific` with [`APP_ID`]: the first
//! half of HMAC-SHA256 keyed by the machine id over the application id, made a v4 UUID — which
//! `systemd-id128 machine-id --app-specific=60dcc66f6b8a4bdc9e6373b9a0df8ab1` prints on the
//! host, and which does not give the machine id back.

use hmac::{Hmac, Mac};
use sha2::Sha256;

/// mcp-deploy's application id (made once with `systemd-id128 new`).
pub(crate) const APP_ID: [u8; 16] = [
    0x60, 0xdc, 0xc6, 0x6f, 0x6b, 0x8a, 0x4b, 0xdc, 0x9e, 0x63, 0x73, 0xb9, 0xa0, 0xdf, 0x8a, 0xb1,
];

const MACHINE_ID: &str = "/etc/machine-id";

/// This machine's id for mcp-deploy, 32 lowercase hex digits, or `None` where there is no
/// usable `/etc/machine-id` (a container without one, a first boot's `uninitialized`).
pub(crate) fn machine() -> Option<String> {
    let text =
        crate::fsio::read_input_string(std::path::Path::new(MACHINE_ID), "machine id", 64).ok()?;
    app_specific(&text)
}

/// The application-specific id of the machine whose `/etc/machine-id` holds `text`, or `None`
/// when `text` is not a machine id (32 hex digits and a newline, not all zero).
fn app_specific(text: &str) -> Option<String> {
    let hex = text.strip_suffix('\n').unwrap_or(text);
    if hex.len() != 32 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let id: Vec<u8> = (0..16)
        .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).expect("hex digits"))
        .collect();
    if id.iter().all(|&b| b == 0) {
        return None;
    }
    let mut mac = Hmac::<Sha256>::new_from_slice(&id).expect("HMAC takes a key of any length");
    mac.update(&APP_ID);
    let mut out: [u8; 16] = mac.finalize().into_bytes()[..16]
        .try_into()
        .expect("16 of 32 bytes");
    // A v4 UUID, as systemd's id128_make_v4_uuid makes it.
    out[6] = (out[6] & 0x0f) | 0x40;
    out[8] = (out[8] & 0x3f) | 0x80;
    Some(out.iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_not_a_machine_id_gives_none() {
        for text in [
            "",
            "uninitialized\n",
            "00000000000000000000000000000000\n",
            "3d1219c7c4c5404aaa1f6d2a48adfda\n",
            "3d1219c7c4c5404aaa1f6d2a48adfda4x\n",
            "3d1219c7-c4c5-404a-aa1f-6d2a48adfda4\n",
        ] {
            assert_eq!(app_specific(text), None, "{text:?}");
        }
    }

    #[test]
    fn the_id_is_a_v4_uuid_that_hides_the_machine_id_and_depends_on_it() {
        let a = app_specific("3d1219c7c4c5404aaa1f6d2a48adfda4\n").unwrap();
        let b = app_specific("3d1219c7c4c5404aaa1f6d2a48adfda5\n").unwrap();
        assert_eq!(a.len(), 32);
        assert_ne!(a, b);
        assert_ne!(a, "3d1219c7c4c5404aaa1f6d2a48adfda4");
        assert_eq!(&a[12..13], "4", "{a}");
        assert!("89ab".contains(&a[16..17]), "{a}");
        assert_eq!(app_specific("3d1219c7c4c5404aaa1f6d2a48adfda4"), Some(a));
    }
}
