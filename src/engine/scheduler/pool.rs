//! The compute threads: a rayon pool, its threads pinned to cores when the operator asks.

use crate::engine::registry::Note;

/// The compute threads.
pub(crate) fn pool(
    threads: usize,
    pin_from_core: Option<usize>,
    notes: fn(Note, &str),
) -> std::io::Result<rayon::ThreadPool> {
    let mut b = rayon::ThreadPoolBuilder::new().num_threads(threads).thread_name(|i| format!("reseam-compute-{i}"));
    if let Some(first) = pin_from_core {
        b = b.start_handler(move |i| pin(first + i, notes));
    }
    b.build().map_err(std::io::Error::other)
}

fn pin(core: usize, notes: fn(Note, &str)) {
    if let Some(id) = core_affinity::get_core_ids().and_then(|ids| ids.into_iter().find(|c| c.id == core))
        && !core_affinity::set_for_current(id)
    {
        notes(Note::Warn, &format!("could not pin a compute thread to core {core}"));
    }
}
