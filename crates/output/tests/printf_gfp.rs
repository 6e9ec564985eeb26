//! `%gr`: GFP flags by name, as the kernel's `%pGg` and bpftrace's current
//! release print them (compound masks first, in `mmflags.h` order; bits
//! without a name in hex; `0` for none), padded like a string.

use output::{Format, Render, Value};

fn render(format: &str, flags: i64) -> String {
    let parsed = Format::parse(format);
    assert_eq!(
        parsed.validate(),
        Ok(vec![output::ArgKind::Integer]),
        "{format}"
    );
    String::from_utf8(parsed.render(&[Value::Int(flags)])).unwrap()
}

#[test]
fn gfp_flags_by_name() {
    let cases: &[(i64, &str)] = &[
        (0x1, "GFP_DMA"),
        (0, "0"),
        // __GFP_IO | __GFP_FS | both reclaim bits.
        (0xcc0, "GFP_KERNEL"),
        (0xcc0 | 0x100, "GFP_KERNEL|__GFP_ZERO"),
        (0xcc0 | 0x400000, "GFP_KERNEL_ACCOUNT"),
        // __GFP_HIGH | __GFP_KSWAPD_RECLAIM, then __GFP_HIGHMEM on its own.
        (0x820 | 0x2, "GFP_ATOMIC|__GFP_HIGHMEM"),
        (
            0x40 | 0x80 | 0x400,
            "__GFP_IO|__GFP_FS|__GFP_DIRECT_RECLAIM",
        ),
        // GFP_HIGHUSER_MOVABLE: GFP_USER | __GFP_HIGHMEM | __GFP_MOVABLE | __GFP_SKIP_KASAN.
        (
            0xcc0 | 0x100000 | 0x2 | 0x8 | 0x2000000,
            "GFP_HIGHUSER_MOVABLE",
        ),
        (0x1 | (1 << 40), "GFP_DMA|0x10000000000"),
        (1 << 9, "0x200"),
    ];
    for &(flags, want) in cases {
        assert_eq!(render("%gr", flags), want, "{flags:#x}");
    }
    assert_eq!(render("GFPFlags: %gr\n", 1), "GFPFlags: GFP_DMA\n");
    assert_eq!(render("[%-10gr]", 1), "[GFP_DMA   ]");
    assert_eq!(render("[%10gr]", 1), "[   GFP_DMA]");
}
