//! USDT argument specs: what each form parses to, and the error each
//! malformed spec gives (never a panic).

use std::fmt::Write as _;

use uelf::{ArgLocation, UsdtArg, parse_arg_specs};

fn show_arg(a: &UsdtArg) -> String {
    let ty = format!("{}{}", if a.signed { "s" } else { "u" }, a.size * 8);
    let reg = |r: &abi::arch::Register| {
        let mut s = format!("regs+{}", r.offset);
        if r.size != 8 {
            write!(s, ":{}", r.size * 8).ok();
        }
        if r.shift != 0 {
            write!(s, ">>{}", r.shift).ok();
        }
        s
    };
    let loc = match &a.location {
        ArgLocation::Const(v) => format!("const {v}"),
        ArgLocation::Reg(r) => reg(r),
        ArgLocation::Mem {
            base,
            offset,
            index,
        } => {
            let mut s = format!("*({}", reg(base));
            if let Some((i, scale)) = index {
                write!(s, " + {} * {scale}", reg(i)).ok();
            }
            write!(s, " + {offset})").ok();
            s
        }
    };
    format!("{ty} {loc}")
}

fn show(spec: &str) -> String {
    match parse_arg_specs(spec) {
        Ok(args) => {
            let parts: Vec<String> = args.iter().map(show_arg).collect();
            format!("{spec:?} => [{}]", parts.join(", "))
        }
        Err(e) => format!("{spec:?} => error at {}: {e}", e.at),
    }
}

#[test]
fn valid_specs() {
    let specs = [
        "",
        "-4@%eax",
        "8@%rdx",
        "4@$5",
        "-4@$-17",
        "8@$0xff",
        "8@-8(%rbp)",
        "-2@(%rsp)",
        "1@%ah",
        "8@16(%rax,%rbx,8)",
        "4@-0x10(%rsp,%rcx)",
        "-4@%r12d 8@%r15 2@%r9w 1@%sil",
        "  -4@%edi   8@%rsi  ",
        "8@%rip",
    ];
    let text: Vec<String> = specs.iter().map(|s| show(s)).collect();
    insta::assert_snapshot!(text.join("\n"));
}

#[test]
fn malformed_specs() {
    let specs = [
        "4",
        "3@%eax",
        "-@%eax",
        "4@%xmm0",
        "4@eax",
        "8@$abc",
        "8@8(%rbp",
        "8@foo(%rip)",
        "8@8(rbp)",
        "8@8(%rax,%rbx,3)",
        "8@8(%rax,rbx)",
        "8@8(%rax,%rbx,8,1)",
        "-4@%eax 8@%rzz",
        "8@",
        "@%rax",
        "8@$99999999999999999999",
    ];
    let text: Vec<String> = specs.iter().map(|s| show(s)).collect();
    insta::assert_snapshot!(text.join("\n"));
}

#[test]
fn arbitrary_bytes_never_panic() {
    let alphabet = b"-+@%$(),0x18 abrdeisp9";
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    for _ in 0..20_000 {
        let mut s = String::new();
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let len = (seed % 24) as usize;
        let mut x = seed;
        for _ in 0..len {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            s.push(alphabet[(x >> 33) as usize % alphabet.len()] as char);
        }
        let _ = parse_arg_specs(&s);
    }
}
