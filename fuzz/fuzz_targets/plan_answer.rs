//! Any `_query_plan` answer (a server's bytes, hostile or not) either fails with a typed
//! error or gives a plan whose tablet ids are positive, distinct and ascending; grouping
//! that plan into read tasks reads every tablet exactly once.
#![no_main]

use doris_plan::{ReadTask, group_tablets, parse_plan_answer};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|body: &[u8]| {
    let Ok(plan) = parse_plan_answer(body) else {
        return;
    };
    let ids: Vec<u64> = plan.tablets.iter().map(|t| t.id).collect();
    assert!(ids.iter().all(|id| *id > 0), "{ids:?}");
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");
    for target in [1, 3, 8] {
        let mut read: Vec<u64> = group_tablets(&plan, target)
            .into_iter()
            .flat_map(|task| match task {
                ReadTask::Tablets(t) => t,
                ReadTask::Empty | ReadTask::Whole => Vec::new(),
            })
            .collect();
        read.sort_unstable();
        assert_eq!(read, ids, "grouped into {target}");
    }
});
