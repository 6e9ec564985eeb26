//! Gives `output` the frames of stacks and the names of symbols: stack ids
//! are read from the session's stack-trace maps, kernel addresses resolved
//! with `/proc/kallsyms` (read once, on first use), user addresses with the
//! runtime's per-pid user symbolizer.

use output::{Frame, Stack, StackResolver, Symbol, Value};
use runtime::Session;
use runtime::symbols::{Kallsyms, ResolvedSymbol, UserSymbols};

/// Symbol tables kept for the whole run.
#[derive(Default)]
pub struct Symbols {
    kernel: Option<Kallsyms>,
    user: Option<UserSymbols>,
}

impl Symbols {
    fn kernel(&mut self) -> &Kallsyms {
        self.kernel.get_or_insert_with(Kallsyms::load)
    }

    fn user(&mut self) -> &mut UserSymbols {
        self.user.get_or_insert_with(UserSymbols::new)
    }

    /// A resolver reading stacks from `session`.
    pub fn resolver<'a>(&'a mut self, session: &'a Session) -> Resolver<'a> {
        Resolver {
            session,
            symbols: self,
        }
    }
}

/// [`StackResolver`] over one session.
pub struct Resolver<'a> {
    session: &'a Session,
    symbols: &'a mut Symbols,
}

fn symbol(s: ResolvedSymbol) -> Symbol {
    Symbol {
        name: s.name,
        offset: s.offset,
        module: s.module,
    }
}

impl StackResolver for Resolver<'_> {
    fn frames(&mut self, stack: &Stack) -> Vec<Frame> {
        let Ok(id) = u32::try_from(stack.id) else {
            return Vec::new();
        };
        let map = abi::stack::stack_map_name(stack.limit);
        // A stack that cannot be read prints empty rather than failing the output.
        let addrs = self.session.stack_addresses(&map, id).unwrap_or_default();
        let syms: Vec<Option<ResolvedSymbol>> = if stack.user {
            self.symbols.user().frames(stack.pid, &addrs)
        } else {
            let kernel = self.symbols.kernel();
            addrs
                .iter()
                .enumerate()
                .map(|(i, &a)| kernel.lookup_frame(a, i == 0))
                .collect()
        };
        addrs
            .iter()
            .zip(syms)
            .map(|(&addr, s)| Frame {
                addr,
                symbol: s.map(symbol),
            })
            .collect()
    }

    fn symbol(&mut self, user: bool, addr: u64, pid: u32) -> Option<String> {
        let found = if user {
            self.symbols.user().lookup(pid, &[addr]).pop().flatten()
        } else {
            self.symbols.kernel().lookup(addr)
        };
        found.map(|s| s.name)
    }
}

/// Resolves the stacks and symbols among printf arguments.
pub fn resolve_args(args: &mut [Value], resolver: &mut Resolver<'_>) {
    for a in args {
        output::resolve_value(a, resolver);
    }
}
