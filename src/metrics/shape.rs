//! The figures a scenario's features add to every row of its report, whichever contender the
//! row is: every row of summary.csv has the same columns, and `expect` lines are checked
//! against the same names before anything runs.

use super::{AlgorithmReport, DeploymentReport};

/// What of a scenario adds figures to every row.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Features {
    /// Some contender is a `[[contender]]`: bypassed, unlimited and warned counts.
    pub contenders: bool,
    /// Some contender is a dry run: `would_refuse` (0 for the others).
    pub dry_runs: bool,
    /// Some contender runs with a deployment: the deployment figures.
    pub deployments: bool,
    /// The keys-per-client figures are kept ([`super::keys_per_client_kept`]).
    pub keys_per_client: bool,
    /// A generated source's requests may weigh more than 1: the volume in units of cost.
    pub costs: bool,
    /// The intent counts units of cost: the units over it and needlessly refused.
    pub cost_intent: bool,
}

impl Features {
    /// Gives `report` the figures its row lacks: zeros for a contender's counts, a single
    /// node's deployment figures (one replica, no store), zero keys per client. Figures the
    /// run measured are left as they are.
    pub fn fill(&self, report: &mut AlgorithmReport) {
        if self.contenders {
            for count in [
                &mut report.bypassed,
                &mut report.unlimited,
                &mut report.warned,
            ] {
                count.get_or_insert(0);
            }
            // nginx's default `limit_req_status`, every contender's unless it says otherwise.
            report.refuse_status.get_or_insert(503);
        } else {
            // Without stacked contenders no row carries it (a deployed single contender would
            // otherwise be the one row with the column).
            report.refuse_status = None;
        }
        if self.dry_runs {
            report.would_refuse.get_or_insert(0);
        }
        if self.deployments && report.deployment.is_none() {
            report.deployment = Some(DeploymentReport::single_node());
        }
        if self.keys_per_client {
            for source in &mut report.sources {
                source.keys_per_client_max.get_or_insert(0.0);
                source.keys_per_client_mean.get_or_insert(0.0);
            }
        }
        if self.costs || self.cost_intent {
            let intent = self.cost_intent;
            let fill = |c: &mut Option<super::CostCounts>| {
                let c = c.get_or_insert_default();
                if intent {
                    c.over_intent.get_or_insert(0);
                    c.needless.get_or_insert(0);
                }
            };
            fill(&mut report.cost);
            if self.costs {
                report.cost_delay.get_or_insert_default();
            }
            for source in &mut report.sources {
                fill(&mut source.cost);
            }
        }
    }
}
