//! Back-test tally: a contender's decisions against production's, request by request, for
//! replayed traces that record them (a `decision` column, nginx's `$limit_req_status`, or a
//! status: see [`crate::traffic::Logged`]).
//!
//! A confusion matrix (both admitted, both refused, only production refused, only the
//! contender refused), per route and per real client, and each disagreement's likely cause,
//! named where the log allows it (docs/backtest.md). Per request it only adds to fixed cells:
//! the route table is sized at setup ([`ROUTES`]), the client and key tables grow by doubling
//! as a replay interns new ones (like the recorder's own entries), the kept instants are a
//! bounded list.

use crate::algorithms::{Decision, KeyId, Outcome, Params};
use crate::time::Nanos;
use crate::traffic::{Arrival, ClientId, KeySpace, ROUTES, Verdict};
use serde::Serialize;
use strum::VariantArray;

/// The likely cause of a disagreement at `t` (see [`Cause`]), from the states of the keys
/// that decided it just before, with their limiters' windows.
fn cause(
    keys: &[KeyState],
    deciders: &[RuleDecision],
    windows: impl Iterator<Item = Nanos>,
    t: Nanos,
    verdict: Verdict,
) -> Cause {
    // The refusing decider's retry after (it comes last), also when a dry run admitted what it
    // refused.
    let refused = deciders
        .iter()
        .rev()
        .find_map(|(_, _, d, _)| match d.outcome {
            Outcome::Reject { retry_after } => Some(retry_after),
            _ => None,
        });
    let edge = match refused {
        Some(retry_after) => retry_after <= MS,
        None => keys
            .iter()
            .any(|k| k.edge > 0 && t + 1 >= k.edge && t + 1 - k.edge <= MS),
    };
    if edge {
        Cause::SlotEdge
    } else if keys.iter().any(|k| within(t, k.prev, MS)) {
        Cause::LogOrder
    } else if verdict.delayed() || keys.iter().any(|k| k.prev_delayed) {
        Cause::DelayedTime
    } else if keys
        .iter()
        .zip(windows)
        .any(|(k, w)| k.disagreed > 0 && t.saturating_sub(k.disagreed - 1) < w)
    {
        Cause::AfterEarlier
    } else {
        Cause::Unexplained
    }
}

/// One millisecond: nginx's clock tick, and the log's resolution.
const MS: Nanos = 1_000_000;

/// The disagreements kept with their instant, cause and client (the first ones of the run).
pub const KEPT_DISAGREEMENTS: usize = 50;
/// The clients listed, most disagreements first.
pub const TOP_CLIENTS: usize = 10;

/// One confusion matrix.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Cells {
    pub both_admitted: u64,
    pub both_refused: u64,
    pub only_production_refused: u64,
    pub only_contender_refused: u64,
}

impl Cells {
    #[inline]
    fn add(&mut self, production: bool, contender: bool) {
        match (production, contender) {
            (false, false) => self.both_admitted += 1,
            (true, true) => self.both_refused += 1,
            (true, false) => self.only_production_refused += 1,
            (false, true) => self.only_contender_refused += 1,
        }
    }

    pub fn decisions(&self) -> u64 {
        self.both_admitted + self.both_refused + self.disagreements()
    }

    pub fn disagreements(&self) -> u64 {
        self.only_production_refused + self.only_contender_refused
    }

    /// Decisions reproduced, as a share (1 with no decision).
    pub fn agreement(&self) -> f64 {
        match self.decisions() {
            0 => 1.0,
            n => (self.both_admitted + self.both_refused) as f64 / n as f64,
        }
    }
}

/// Why a disagreement most likely happened, the first that applies in this order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::VariantArray)]
pub enum Cause {
    /// Within 1 ms of a slot edge: the contender refused (a dry run too) with a retry after of
    /// at most 1 ms, or
    /// admitted at most 1 ms after the moment its key would next admit (as a peek just after
    /// the key's previous decision said; for a stack, any deciding rule's key).
    /// nginx decides on its own millisecond clock, `$msec` is the wall clock rounded apart.
    SlotEdge,
    /// Another request of the same key was logged within 1 ms before: the log's order within
    /// a millisecond is not the order production decided in.
    LogOrder,
    /// This request or the key's previous one was delayed by production: its time is
    /// reconstructed (`$msec − $request_time`), to the millisecond.
    DelayedTime,
    /// The key disagreed within the last window already: the two states have drifted apart
    /// since, and follow from that first disagreement.
    AfterEarlier,
    /// None of the above.
    Unexplained,
}

impl Cause {
    /// The cause's name in `summary.json` (`cause_<name>`, a disagreement's `cause`): `slot_edge`,
    /// `log_order`, `delayed_time`, `after_earlier` or `unexplained`.
    pub fn name(self) -> &'static str {
        match self {
            Cause::SlotEdge => "slot_edge",
            Cause::LogOrder => "log_order",
            Cause::DelayedTime => "delayed_time",
            Cause::AfterEarlier => "after_earlier",
            Cause::Unexplained => "unexplained",
        }
    }

    /// One clause for the terminal and the report.
    pub fn explain(self) -> &'static str {
        match self {
            Cause::SlotEdge => "within 1 ms of a slot edge",
            Cause::LogOrder => "logged within 1 ms of the key's previous request",
            Cause::DelayedTime => "a delayed request's time reconstructed",
            Cause::AfterEarlier => "after an earlier disagreement of the key",
            Cause::Unexplained => "no cause named",
        }
    }
}

/// What the tally keeps of each key to name causes.
#[derive(Debug, Clone, Copy, Default)]
struct KeyState {
    /// The key's previous logged request's time + 1 (0: none yet).
    prev: Nanos,
    /// When the contender next opens a slot for the key, + 1 (0: it has room already).
    edge: Nanos,
    /// The key's last disagreement + 1 (0: none).
    disagreed: Nanos,
    /// Whether production delayed the key's previous request.
    prev_delayed: bool,
    /// The index in the kept list of the key's last disagreement when it had no cause, to
    /// name it `log_order` should the next request follow within 1 ms.
    pending: Option<u32>,
}

/// One kept disagreement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Kept {
    time: Nanos,
    client: ClientId,
    route: u8,
    production_refused: bool,
    cause: Cause,
}

pub struct Backtest {
    refuse_status: u16,
    cells: Cells,
    routes: [Cells; ROUTES],
    clients: Vec<[u32; 4]>,
    /// The deciding keys' states: the policy key's (table 0), then each stack rule's.
    tables: Vec<Table>,
    /// The deciding keys' states before the request being tallied (reused).
    before: Vec<KeyState>,
    causes: [u64; Cause::VARIANTS.len()],
    kept: Vec<Kept>,
}

/// The keys of one limiter: the contender's (under the policy key) or one stack rule's.
#[derive(Debug, Clone, Default)]
struct Table {
    window: Nanos,
    keys: Vec<KeyState>,
}

impl Table {
    fn of(params: Params) -> Table {
        Table {
            window: params.window,
            keys: Vec::new(),
        }
    }
}

/// A stack rule's decision on one of its keys: the rule's index among the stack's, the key, the
/// decision, and when the key next admits just after it (0: it has room; computed only for
/// requests production decided).
pub type RuleDecision = (usize, KeyId, Decision, Nanos);

/// The keys that decided a request, for the back-test's causes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Deciders<'a> {
    /// A stack's rules that decided: the refusing one (after any it charged), or every one
    /// charged; empty: one limiter under the policy key decided.
    pub rules: &'a [RuleDecision],
    /// When the policy key next admits, just after the decision (0: it has room); for one
    /// limiter under the policy key.
    pub opens_at: Nanos,
    /// The status the contender's refusal of this request answers (the deciding rule's
    /// `refuse_status`), against which a status-only record is read; 0: the contender's own.
    pub refuse_status: u16,
    /// A dry-run rule refused the request, which was admitted: the back-test compares the
    /// limiter's decision, enforced or not, as production's `would_refuse` is.
    pub would_refuse: bool,
}

/// The time since `mark` (a time + 1, 0: none) is at most `span`.
fn within(t: Nanos, mark: Nanos, span: Nanos) -> bool {
    mark > 0 && t.saturating_sub(mark - 1) <= span
}

impl Backtest {
    /// Production's refusal status, for records that carry only a status.
    pub fn set_refuse_status(&mut self, status: u16) {
        self.refuse_status = status;
    }

    /// A tally comparing with production, whose status-only records are refusals when their
    /// status is `refuse_status`.
    pub fn new(refuse_status: u16) -> Backtest {
        Backtest {
            refuse_status,
            cells: Cells::default(),
            routes: [Cells::default(); ROUTES],
            clients: Vec::new(),
            tables: vec![Table::default()],
            before: Vec::new(),
            causes: [0; Cause::VARIANTS.len()],
            kept: Vec::with_capacity(KEPT_DISAGREEMENTS),
        }
    }

    /// The contender's parameters (its window bounds how long a disagreement is followed).
    pub fn set_params(&mut self, params: Params) {
        self.tables[0] = Table::of(params);
    }

    /// A stack's rules' parameters, in order: its rules' keys then decide, each followed over
    /// its own window (a disagreement on a key every client shares is judged on that key).
    pub fn set_rule_params(&mut self, rules: &[Params]) {
        self.tables.truncate(1);
        self.tables.extend(rules.iter().map(|&p| Table::of(p)));
    }

    /// One decision on a request production decided too.
    #[inline]
    pub fn on_decision(
        &mut self,
        a: &Arrival,
        verdict: Verdict,
        decision: &Decision,
        deciders: Deciders<'_>,
    ) {
        let status = match deciders.refuse_status {
            0 => self.refuse_status,
            s => s,
        };
        let production = verdict.refused(status);
        let contender = !decision.outcome.is_admitted() || deciders.would_refuse;
        let route = a.logged.route();
        self.cells.add(production, contender);
        self.routes[route].add(production, contender);
        let client = grow(&mut self.clients, a.client as usize);
        client[usize::from(production) * 2 + usize::from(contender)] += 1;
        let t = a.time;
        let policy = [(0, a.key, *decision, deciders.opens_at)];
        let (deciders, offset) = match deciders.rules.is_empty() {
            true => (&policy[..], 0),
            false => (deciders.rules, 1),
        };
        self.before.clear();
        for &(r, key, ..) in deciders {
            let state = *grow(&mut self.tables[r + offset].keys, key as usize);
            self.before.push(state);
        }
        for j in 0..self.before.len() {
            let state = self.before[j];
            if let Some(i) = state.pending
                && within(t, state.prev, MS)
            {
                self.rename(i as usize, Cause::LogOrder);
            }
        }
        let mut pending = None;
        let disagreed = production != contender;
        if disagreed {
            let windows = deciders
                .iter()
                .map(|&(r, ..)| self.tables[r + offset].window);
            let cause = cause(&self.before, deciders, windows, t, verdict);
            self.causes[cause as usize] += 1;
            if self.kept.len() < KEPT_DISAGREEMENTS {
                if cause == Cause::Unexplained {
                    pending = Some(self.kept.len() as u32);
                }
                self.kept.push(Kept {
                    time: t,
                    client: a.client,
                    route: route as u8,
                    production_refused: production,
                    cause,
                });
            }
        }
        for (j, &(r, key, d, opens_at)) in deciders.iter().enumerate() {
            let table = &mut self.tables[r + offset];
            table.keys[key as usize] = KeyState {
                prev: t + 1,
                prev_delayed: verdict.delayed(),
                edge: match d.outcome {
                    Outcome::Reject { retry_after } => t.saturating_add(retry_after) + 1,
                    _ if opens_at > 0 => opens_at + 1,
                    _ => 0,
                },
                disagreed: if disagreed {
                    t + 1
                } else {
                    self.before[j].disagreed
                },
                pending,
            };
        }
    }

    /// A kept disagreement without a cause gets one, from the key's next request.
    #[cold]
    fn rename(&mut self, i: usize, cause: Cause) {
        let old = self.kept[i].cause;
        self.causes[old as usize] -= 1;
        self.causes[cause as usize] += 1;
        self.kept[i].cause = cause;
    }

    /// Whether any request carried production's decision.
    pub fn active(&self) -> bool {
        self.cells.decisions() > 0
    }

    /// The report, names read from `keys`; `None` when no request carried a decision.
    pub fn finish(self, keys: &KeySpace) -> Option<BacktestReport> {
        if !self.active() {
            return None;
        }
        let routes = (0..ROUTES)
            .filter(|&r| self.routes[r].decisions() > 0)
            .map(|r| BacktestRow::new(keys.route_name(r), &self.routes[r]))
            .collect();
        let mut clients: Vec<(usize, Cells)> = self
            .clients
            .iter()
            .enumerate()
            .map(|(id, c)| (id, cells_of(c)))
            .filter(|(_, c)| c.disagreements() > 0)
            .collect();
        // Most disagreements first, then by id: the order is the run's, not the hash's.
        clients.sort_by(|a, b| {
            b.1.disagreements()
                .cmp(&a.1.disagreements())
                .then(a.0.cmp(&b.0))
        });
        clients.truncate(TOP_CLIENTS);
        let clients = clients
            .iter()
            .map(|(id, c)| BacktestRow::new(keys.client_name(*id as ClientId), c))
            .collect();
        let disagreements = self
            .kept
            .iter()
            .map(|k| BacktestDisagreement {
                time_ns: k.time,
                client: keys.client_name(k.client).to_string(),
                route: keys.route_name(k.route as usize).to_string(),
                production: if k.production_refused {
                    "refused"
                } else {
                    "admitted"
                }
                .into(),
                contender: if k.production_refused {
                    "admitted"
                } else {
                    "refused"
                }
                .into(),
                cause: k.cause.name().to_string(),
            })
            .collect();
        let c = &self.causes;
        Some(BacktestReport {
            refuse_status: self.refuse_status,
            decisions: self.cells.decisions(),
            both_admitted: self.cells.both_admitted,
            both_refused: self.cells.both_refused,
            only_production_refused: self.cells.only_production_refused,
            only_contender_refused: self.cells.only_contender_refused,
            agreement: self.cells.agreement(),
            cause_slot_edge: c[Cause::SlotEdge as usize],
            cause_log_order: c[Cause::LogOrder as usize],
            cause_delayed_time: c[Cause::DelayedTime as usize],
            cause_after_earlier: c[Cause::AfterEarlier as usize],
            cause_unexplained: c[Cause::Unexplained as usize],
            routes,
            clients,
            disagreements,
        })
    }
}

/// A client's cells, stored as `[both admitted, only contender, only production, both refused]`.
fn cells_of(c: &[u32; 4]) -> Cells {
    Cells {
        both_admitted: c[0].into(),
        only_contender_refused: c[1].into(),
        only_production_refused: c[2].into(),
        both_refused: c[3].into(),
    }
}

/// The entry `i` of a table indexed by id, grown (by doubling) to hold it.
#[inline]
fn grow<T: Default + Clone>(table: &mut Vec<T>, i: usize) -> &mut T {
    if i >= table.len() {
        grow_to(table, i);
    }
    &mut table[i]
}

#[cold]
fn grow_to<T: Default + Clone>(table: &mut Vec<T>, i: usize) {
    table.resize((i + 1).next_power_of_two().max(64), T::default());
}

/// `summary.json`'s `backtest` object of a contender (present when the replayed trace records
/// production's decisions; flattened as `backtest_<field>`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, schemars::JsonSchema)]
pub struct BacktestReport {
    /// The status that is a refusal in records with only a status (the contender's).
    pub refuse_status: u16,
    /// Requests production decided, and how both decided them.
    pub decisions: u64,
    /// Of `decisions`, requests both production and the contender admitted.
    pub both_admitted: u64,
    /// Of `decisions`, requests both refused.
    pub both_refused: u64,
    /// Of `decisions`, requests production refused and the contender admitted.
    pub only_production_refused: u64,
    /// Of `decisions`, requests the contender refused and production admitted.
    pub only_contender_refused: u64,
    /// (both admitted + both refused) / decisions.
    pub agreement: f64,
    /// The disagreements by likely cause (docs/backtest.md); they sum to the disagreements.
    /// Disagreements within 1 ms of a slot edge ([`Cause::SlotEdge`]).
    pub cause_slot_edge: u64,
    /// Disagreements a millisecond's log order explains ([`Cause::LogOrder`]).
    pub cause_log_order: u64,
    /// Disagreements on a request whose time is reconstructed from production's delay
    /// ([`Cause::DelayedTime`]).
    pub cause_delayed_time: u64,
    /// Disagreements following an earlier one of the key in the window ([`Cause::AfterEarlier`]).
    pub cause_after_earlier: u64,
    /// Disagreements with none of those causes ([`Cause::Unexplained`]).
    pub cause_unexplained: u64,
    /// Every route, in order of first appearance (past the 31st: `(other routes)`).
    pub routes: Vec<BacktestRow>,
    /// The clients with the most disagreements (at most 10).
    pub clients: Vec<BacktestRow>,
    /// The first disagreements of the run (at most 50), request by request.
    pub disagreements: Vec<BacktestDisagreement>,
}

/// One route's or client's confusion matrix.
#[derive(Debug, Clone, Default, PartialEq, Serialize, schemars::JsonSchema)]
pub struct BacktestRow {
    /// The route (`(other routes)` past the 31st) or the real client.
    pub name: String,
    /// Its requests both production and the contender admitted.
    pub both_admitted: u64,
    /// Its requests both refused.
    pub both_refused: u64,
    /// Its requests production refused and the contender admitted.
    pub only_production_refused: u64,
    /// Its requests the contender refused and production admitted.
    pub only_contender_refused: u64,
    /// Its decisions both made alike, as a share in [0, 1] (1 with no decision).
    pub agreement: f64,
}

impl BacktestRow {
    fn new(name: &str, c: &Cells) -> BacktestRow {
        BacktestRow {
            name: name.to_string(),
            both_admitted: c.both_admitted,
            both_refused: c.both_refused,
            only_production_refused: c.only_production_refused,
            only_contender_refused: c.only_contender_refused,
            agreement: c.agreement(),
        }
    }
}

/// One request production and the contender decided differently.
#[derive(Debug, Clone, Default, PartialEq, Serialize, schemars::JsonSchema)]
pub struct BacktestDisagreement {
    /// Virtual time of the request.
    pub time_ns: Nanos,
    /// The request's real client.
    pub client: String,
    /// The request's route (`(other routes)` past the 31st).
    pub route: String,
    /// `admitted` or `refused`.
    pub production: String,
    /// The contender's decision, the opposite of `production`: `admitted` or `refused`.
    pub contender: String,
    /// `slot_edge`, `log_order`, `delayed_time`, `after_earlier` or `unexplained`.
    pub cause: String,
}
