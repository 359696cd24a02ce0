//! A report made by a real run over mock models with a virtual clock: what the format tests
//! use. Deterministic: the same numbers on every machine.

use std::sync::OnceLock;

use crate::speculate::clock::VirtualClock;
use crate::speculate::energy::VirtualEnergy;
use crate::speculate::mock::{Charged, OracleModel};
use crate::speculate::report::{KSetting, Report};
use crate::speculate::rounds::{BaselineTiming, DecodeOptions, RunOrder, Verify};
use crate::speculate::run::{Draft, Prompt, RunOptions, run};
use crate::speculate::strategy::{Pair, Strategy};
use crate::speculate::testutil::tok;

pub const TEXTS: [&str; 2] = [
    "Rzeczpospolita Polska jest państwem w Europie Środkowej, położonym nad Morzem Bałtyckim. Stolicą i największym miastem kraju jest Warszawa.",
    "Kraków leży nad Wisłą i przez wieki był stolicą Polski. Jego Stare Miasto wpisano na listę światowego dziedzictwa UNESCO.",
];

/// Builds a mock report: a mistral-tokenizer target and a qwen-tokenizer draft that are right
/// about 70% of the time, target passes 20 ms (+1 ms per extra position), draft passes 4 ms.
pub fn build(clock: VirtualClock) -> Report {
    let (t, d) = (tok("mistral-tiny"), tok("qwen2-tiny"));
    let target = Charged::new(OracleModel::new(t, t.len(), &TEXTS, 2).expect("oracle"), clock.clone(), 0.020, 0.001);
    let mut dm = OracleModel::new(d, 151_936, &TEXTS, 151645).expect("oracle");
    dm.error_rate = 0.3;
    let draft = Charged::new(dm, clock.clone(), 0.004, 0.0);
    let pair = Pair::new(t, d, vec![2], vec![151645, 151643], t.len());
    let prompts: Vec<Prompt> = TEXTS
        .iter()
        .map(|x| Prompt::plain(&x[..x.char_indices().nth(30).map_or(x.len(), |c| c.0)], &pair).expect("prompt"))
        .collect();
    let opts = RunOptions {
        ks: vec![KSetting::Fixed(1), KSetting::Fixed(2), KSetting::Fixed(4), KSetting::Fixed(6), KSetting::Auto],
        strategies: Strategy::ALL.to_vec(),
        decode: DecodeOptions { max_new_tokens: 32, stop: vec![2] },
        verify: Verify::Batched,
        prefix: 5,
        lookbehind: 8,
        k_max_auto: 8,
        divergence_tolerance: 1e-3,
        baseline: BaselineTiming::Once,
        order: RunOrder::Interleaved,
        target_label: "mock:mistral-tokenizer".into(),
        kernel_label: "none".into(),
        clock_label: "virtual".into(),
    };
    let mut energy = VirtualEnergy { clock: clock.clone(), watts: 30.0 };
    let draft = Draft { model: &draft, pair: &pair, label: "mock:qwen2-tokenizer".into() };
    run(&target, t, Some(draft), &prompts, &opts, &clock, &mut energy, &mut |_| {}).expect("mock run")
}

/// The sample report, made once per test process.
pub fn sample() -> &'static Report {
    static R: OnceLock<Report> = OnceLock::new();
    R.get_or_init(|| build(VirtualClock::new()))
}
