//! Chunks encoded on a compute thread of their own while the rounds go on.
//!
//! A round cannot be cut short, so whatever it encodes delays every sentence in it: one chunk of
//! 127 pieces costs about as much as 127 decoder rows, 30–45 ms on a loaded 2-vCPU Xeon, against
//! 1–2 ms for a round that steps a one-sentence request beside a few long ones. So on a server
//! (places kept for light requests, two compute threads or more) heavy requests' chunks are
//! encoded here, one batch at a time, and join the rounds when done; rounds meanwhile run on
//! the other threads. Light requests' chunks are still encoded in the round that admits them.

use std::sync::Arc;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

use reseam_kernels::{Arithmetic, Kernels};

use super::part::Meta;
use crate::engine::EngineError;
use crate::engine::jobs::{Owner, Unit};
use crate::marian::Model;
use crate::marian::search::{Buffers, SearchOptions, Slot};
use crate::marian::transformer::Runtime;
use crate::profile::{self, Kind};

/// A chunk to encode, with its request's settings and whether that request is light.
pub(super) type Entering = (Unit, SearchOptions, bool);

/// An encoded chunk, ready for the decoder, or why it failed.
pub(super) type Entered = Result<(Slot, Meta), (Owner, EngineError)>;

/// Encodes `incoming` chunks of `model` into `out`.
pub(super) fn enter(rt: &Runtime, buf: &mut Buffers, model: &Model, incoming: Vec<Entering>, out: &mut Vec<Entered>) {
    let _t = profile::time(Kind::Encoder);
    let srcs: Vec<&[u32]> = incoming.iter().map(|(u, ..)| u.src.as_slice()).collect();
    profile::rows(Kind::Encoder, srcs.iter().map(|s| s.len()).sum());
    match model.marian.encode(rt, buf.workspace(), &srcs) {
        Ok(encoded) => {
            for (enc, (unit, opts, light)) in encoded.into_iter().zip(incoming) {
                out.push(match Slot::new(model, enc, &unit.src, &opts) {
                    Ok(slot) => Ok((slot, Meta { owner: unit.owner, light, waited: 0 })),
                    Err(e) => Err((unit.owner, e.into())),
                });
            }
        }
        Err(e) => {
            let msg = format!("{:#}", anyhow::Error::from(e));
            out.extend(incoming.into_iter().map(|(u, ..)| Err((u.owner, EngineError::Internal(msg.clone())))));
        }
    }
}

/// Pieces of heavy requests' chunks encoded in one batch: one chunk. A chunk is already 128 rows
/// to each product, and while a batch is out the rounds have one thread fewer, which a light
/// request that arrives meanwhile feels.
pub(super) const PIECES_PER_BATCH: usize = 128;

/// A batch being encoded.
pub(super) struct Background {
    pub model: Arc<Model>,
    owners: Vec<Owner>,
    rx: mpsc::Receiver<(Vec<Entered>, Buffers)>,
}

impl Background {
    /// Starts encoding `chunks` of `model` on a thread of `pool`, with working memory `buf`.
    pub fn start(
        pool: &rayon::ThreadPool,
        (kernels, arith): (&'static Kernels, Arithmetic),
        model: Arc<Model>,
        chunks: Vec<Entering>,
        mut buf: Buffers,
    ) -> Background {
        let owners = chunks.iter().map(|(u, ..)| u.owner).collect();
        let (tx, rx) = mpsc::channel();
        let m = model.clone();
        pool.spawn(move || {
            let rt = Runtime::new(kernels, arith, false);
            let mut out = Vec::with_capacity(chunks.len());
            enter(&rt, &mut buf, &m, chunks, &mut out);
            let _ = tx.send((out, buf));
        });
        Background { model, owners, rx }
    }

    /// Chunks in the batch.
    pub fn units(&self) -> usize {
        self.owners.len()
    }

    /// The batch once encoded, waiting at most `wait`; a batch whose thread died before it
    /// answered comes back as every chunk failed.
    pub fn poll(&self, wait: Duration) -> Option<(Vec<Entered>, Option<Buffers>)> {
        match self.rx.recv_timeout(wait) {
            Ok((entered, buf)) => Some((entered, Some(buf))),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => {
                let e = || EngineError::Internal("encoding a batch of chunks failed".into());
                Some((self.owners.iter().map(|o| Err((*o, e()))).collect(), None))
            }
        }
    }
}
