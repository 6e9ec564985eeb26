//! `BEGIN` and `END`: programs that user space runs once, before the other
//! probes attach and after they detach (BPF_PROG_TEST_RUN of a raw_tp program).

use super::{Context, ResolvedProbe};

pub fn begin() -> ResolvedProbe {
    ResolvedProbe {
        attach: abi::Attach::Begin,
        section: "raw_tp".into(),
        name: "BEGIN".into(),
        context: Context::None,
        short: "begin".into(),
    }
}

pub fn end() -> ResolvedProbe {
    ResolvedProbe {
        attach: abi::Attach::End,
        section: "raw_tp".into(),
        name: "END".into(),
        context: Context::None,
        short: "end".into(),
    }
}
