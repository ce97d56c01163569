//! Any text either fails to parse as a Doris type with a typed error, or parses into a
//! type whose every spelling parses back to the same type.
#![no_main]

use doris_sql::{DorisType, Spelling};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    if let Ok(ty) = text.parse::<DorisType>() {
        for spelling in [Spelling::Legacy, Spelling::Upper, Spelling::Lower, Spelling::Internal] {
            let spelled = ty.spell(spelling);
            let back: DorisType = spelled
                .parse()
                .unwrap_or_else(|e| panic!("{spelled:?} does not parse back: {e}"));
            assert_eq!(back, ty, "{spelled:?}");
        }
        let _ = ty.to_arrow();
    }
});
