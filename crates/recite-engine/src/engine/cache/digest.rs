//! The cache's digest: the file name of a key, the fingerprint of a file, the checksum of an
//! entry.

/// A stable 128-bit digest (two multiply-rotate lanes, finished by murmur's mix): the file name
/// of a key, the fingerprint of a Parquet footer or file, the checksum of an entry. Not
/// cryptographic; it detects damage and change, and the key stored in full guards its collisions.
#[derive(Clone, Copy)]
pub(super) struct Digest {
    a: u64,
    b: u64,
}

impl Digest {
    pub(super) fn new() -> Digest {
        Digest { a: 0x243f_6a88_85a3_08d3, b: 0x1319_8a2e_0370_7344 }
    }

    pub(super) fn of(bytes: &[u8]) -> Digest {
        let mut d = Digest::new();
        d.bytes(bytes);
        d
    }

    #[inline]
    pub(super) fn word(&mut self, w: u64) {
        self.a = (self.a ^ w).wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(29);
        self.b = (self.b.rotate_left(17) ^ w).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    }

    /// Adds bytes, then their length (so consecutive fields cannot run into each other).
    pub(super) fn bytes(&mut self, data: &[u8]) {
        let mut words = data.chunks_exact(8);
        for w in &mut words {
            self.word(u64::from_le_bytes(w.try_into().expect("8 bytes")));
        }
        let rest = words.remainder();
        if !rest.is_empty() {
            let mut last = [0u8; 8];
            last[..rest.len()].copy_from_slice(rest);
            self.word(u64::from_le_bytes(last));
        }
        self.word(data.len() as u64);
    }

    pub(super) fn hex(&self) -> String {
        let fmix = |mut h: u64| {
            h ^= h >> 33;
            h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
            h ^= h >> 33;
            h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
            h ^ (h >> 33)
        };
        format!("{:016x}{:016x}", fmix(self.a ^ self.b.rotate_left(32)), fmix(self.b))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_differ_when_a_byte_or_the_length_does() {
        let a = Digest::of(b"recite sums").hex();
        assert_eq!(a, Digest::of(b"recite sums").hex());
        assert_ne!(a, Digest::of(b"recite sumt").hex());
        assert_ne!(Digest::of(b"ab\0").hex(), Digest::of(b"ab").hex());
        assert_eq!(a.len(), 32);
    }
}
