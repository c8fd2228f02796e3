//! Harm to real clients, counted as the judges find it: needless rejections (per source),
//! collateral (needless rejections of a legit client on a key another client had used), the
//! clients hurt (legit clients with at least one needless rejection) and violations per
//! source. Ids are the judged ids: clients when the intent judges clients (keys mirror them
//! on the fast path), keys when it judges keys.

/// Flags a rejection waits with: its client is legit, and the key that decided it had been
/// used by another client by then.
pub(super) const LEGIT: u8 = 1;
pub(super) const SHARED: u8 = 2;

/// One source's harm.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SourceHarm {
    /// Admissions of the source's requests beyond their client's entitlement.
    pub policy_violations: u64,
    /// The source's needless rejections: ones that, admitted alone, would have kept every
    /// window of their client within its entitlement.
    pub needless_rejections: u64,
    /// Of those, rejections of legit clients on a deciding key another client had used.
    pub collateral_rejections: u64,
    /// The source's legit clients with a first needless rejection (each client counted once,
    /// under the source of that first one).
    pub clients_hurt: u64,
}

#[derive(Debug, Clone, Default)]
pub(super) struct Harm {
    pub needless: u64,
    pub collateral: u64,
    pub collateral_clients: u64,
    pub by_source: Vec<SourceHarm>,
    /// Per id, one bit: a needless rejection of a legit request was found.
    hurt: Vec<u64>,
    /// Per id, one bit: a collateral rejection was found.
    collateral_hit: Vec<u64>,
    /// Judged ids per client (`Bounds::stride`; 0 reads as 1): a client counts once among
    /// the clients hurt whatever budget (base or route) refused it.
    stride: u32,
}

/// Sets bit `id` of `bits`; whether it was clear.
fn set(bits: &mut Vec<u64>, id: u32) -> bool {
    let word = super::dense::slot(bits, id / 64);
    let mask = 1u64 << (id % 64);
    let was_clear = *word & mask == 0;
    *word |= mask;
    was_clear
}

impl Harm {
    /// Harm over judged ids of `stride` per client.
    pub fn per_client(stride: u32) -> Harm {
        Harm {
            stride,
            ..Harm::default()
        }
    }

    #[inline]
    fn source(&mut self, source: u16) -> &mut SourceHarm {
        super::dense::slot(&mut self.by_source, u32::from(source))
    }

    /// An admission beyond the entitlement of a request of `source`.
    #[inline]
    pub fn on_violation(&mut self, source: u16) {
        self.source(source).policy_violations += 1;
    }

    /// A needless rejection of `id`'s request of `source`, waited with `flags`.
    #[cold]
    pub fn on_needless(&mut self, id: u32, source: u16, flags: u8) {
        self.needless += 1;
        let legit = flags & LEGIT != 0;
        let collateral = legit && flags & SHARED != 0;
        let client = id / self.stride.max(1);
        let newly_hurt = legit && set(&mut self.hurt, client);
        let newly_collateral = collateral && set(&mut self.collateral_hit, client);
        let s = self.source(source);
        s.needless_rejections += 1;
        s.clients_hurt += newly_hurt as u64;
        s.collateral_rejections += collateral as u64;
        self.collateral += collateral as u64;
        self.collateral_clients += newly_collateral as u64;
    }
}
