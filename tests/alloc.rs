//! A decoder step allocates nothing in steady state: every buffer it needs was grown by the
//! steps before. Its own test binary, because it replaces the global allocator with one that
//! counts the allocations of the thread that asks it to.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::path::Path;

use reseam::marian::search::{self, Buffers, SearchOptions, Slot};
use reseam::marian::transformer::Runtime;
use reseam::marian::{Model, find};
use reseam_kernels::Arithmetic;

struct Counting;

thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    static COUNT: Cell<usize> = const { Cell::new(0) };
}

// SAFETY: every call is passed to the system allocator unchanged; the counter is a
// thread-local Cell of a const-initialised integer, which allocates nothing.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if COUNTING.with(|c| c.get()) {
            COUNT.with(|n| n.set(n.get() + 1));
        }
        // SAFETY: the caller's layout goes to the system allocator as is.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `alloc` above, i.e. from the system allocator.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if COUNTING.with(|c| c.get()) {
            COUNT.with(|n| n.set(n.get() + 1));
        }
        // SAFETY: as in `alloc`; `ptr` came from the system allocator.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

fn counted<T>(f: impl FnOnce() -> T) -> (T, usize) {
    COUNT.with(|n| n.set(0));
    COUNTING.with(|c| c.set(true));
    let r = f();
    COUNTING.with(|c| c.set(false));
    (r, COUNT.with(|n| n.get()))
}

#[test]
fn decoder_steps_allocate_nothing_once_warm() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tiny-esen");
    let files = find(&dir, "es", "en", Some(Path::new("model.esen.intgemm.alphas.bin"))).expect("fixture");
    let text = std::fs::read_to_string(dir.join("refs/heldout.es")).expect("refs/heldout.es");
    let kernels = reseam_kernels::dispatch::kernels().expect("kernels");
    // With the soft alignment too (`--html`): its rows are reserved when the slot is made.
    for (shortlist, alignment) in [(false, false), (true, false), (false, true)] {
        let model = Model::load(&files, shortlist).expect("fixture model");
        let opts = SearchOptions { shortlist, alignment, ..Default::default() };
        let rt = Runtime::new(kernels, Arithmetic::Exact, false);
        let mut buf = Buffers::default();
        let srcs: Vec<Vec<u32>> = text
            .lines()
            .take(48)
            .map(|l| {
                let mut ids = model.src_vocab.encode(l).unwrap();
                ids.push(model.src_vocab.eos());
                ids
            })
            .collect();
        let refs: Vec<&[u32]> = srcs.iter().map(Vec::as_slice).collect();
        let encoded = model.marian.encode(&rt, buf.workspace(), &refs).unwrap();
        let mut slots: Vec<Slot> =
            encoded.into_iter().zip(&srcs).map(|(e, s)| Slot::new(&model, e, s, &opts).unwrap()).collect();
        // Warm-up: the first steps grow the buffers to this batch and the outputs' capacities.
        for _ in 0..3 {
            search::step(&rt, &model, &mut buf, &mut slots).unwrap();
        }
        for s in &mut slots {
            s.reserve_output(256);
        }
        let mut steps = 0;
        while slots.iter().all(|s| !s.is_done()) && steps < 8 {
            let (r, allocations) = counted(|| search::step(&rt, &model, &mut buf, &mut slots));
            r.unwrap();
            assert_eq!(
                allocations, 0,
                "step {steps} (shortlist {shortlist}, alignment {alignment}) allocated {allocations} times"
            );
            steps += 1;
        }
        assert!(steps >= 3, "too few steps were measured ({steps})");
        if alignment {
            // One row per step over each sentence's source, summing to one.
            for s in &slots {
                let rows = s.alignment().expect("asked for");
                assert_eq!(rows.len(), (3 + steps) * s.source_len());
                for row in rows.chunks(s.source_len()) {
                    assert!((row.iter().sum::<f32>() - 1.0).abs() < 1e-4, "{row:?}");
                }
            }
        }
        // The counter does count: growing a vector is seen.
        let (_, n) = counted(|| vec![0u8; 100]);
        assert_eq!(n, 1);
    }
}
