//! A model's waiting chunks, one queue per request, taken in turn by weighted fair queueing on
//! source pieces (see [`Lane::pop`]).

use std::collections::VecDeque;

use crate::engine::jobs::Unit;

/// A model with work: its chunks waiting for the encoder, one queue per request, and how many
/// of its sentences are live.
#[derive(Default)]
pub(super) struct Lane {
    /// Requests with chunks waiting, each with the source pieces admitted so far and its waiting
    /// chunks in order.
    pub(super) pending: VecDeque<Waiting>,
    pub(super) live: usize,
    /// Its place in the models' turns (see [`super::turns`]).
    pub(super) turn: super::turns::Turn,
}

/// One request's chunks waiting for a model.
pub(super) struct Waiting {
    request: (usize, u64),
    /// Source pieces of this request admitted to the model so far: its share of the engine.
    admitted: usize,
    /// Source pieces of its chunks still waiting.
    waiting: usize,
    chunks: VecDeque<Unit>,
}

impl Waiting {
    /// A request of at most [`LIGHT_PIECES`] source pieces for this model, which may take the
    /// places kept from heavy ones.
    fn light(&self) -> bool {
        self.admitted + self.waiting <= LIGHT_PIECES
    }
}

/// Source pieces of a light request (a few sentences).
const LIGHT_PIECES: usize = 256;

impl Lane {
    pub(super) fn push(&mut self, unit: Unit) {
        let request = unit.owner.request();
        let pieces = unit.src.len();
        match self.pending.iter_mut().find(|w| w.request == request) {
            Some(w) => {
                w.waiting += pieces;
                w.chunks.push_back(unit);
            }
            None => self.pending.push_back(Waiting {
                request,
                admitted: 0,
                waiting: pieces,
                chunks: VecDeque::from([unit]),
            }),
        }
    }

    /// The next chunk in turn: the first chunk of the request that has had the fewest source
    /// pieces admitted (the first in line of those tied), which then goes to the back of the
    /// line. Fair queueing by request, on pieces: a one-sentence request that arrives while 64
    /// requests of 20,000 characters each are being translated takes the next free place,
    /// instead of waiting its turn behind one chunk of every one of them (or for them to end).
    /// By request rather than by client address or token: behind a proxy or a shared token
    /// every request has the same client, and a request is what a client waits for.
    /// Of requests tied (every new one has had nothing), the one with the fewest pieces in all
    /// goes first: a one-sentence request that comes with a burst of heavy ones is not put
    /// behind them. Only of light requests when `heavy` is false, only of heavy ones when
    /// `light` is. The chunk, and whether its request is light.
    pub(super) fn pop(&mut self, heavy: bool, light: bool) -> Option<(Unit, bool)> {
        let at = (0..self.pending.len())
            .filter(|&i| if self.pending[i].light() { light } else { heavy })
            .min_by_key(|&i| (self.pending[i].admitted, self.pending[i].admitted + self.pending[i].waiting))?;
        let mut w = self.pending.remove(at)?;
        let light = w.light();
        let unit = w.chunks.pop_front();
        if let Some(u) = &unit {
            w.admitted += u.src.len();
            w.waiting -= u.src.len();
        }
        if !w.chunks.is_empty() {
            self.pending.push_back(w);
        }
        unit.map(|u| (u, light))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::jobs::Owner;

    fn unit(job: usize, chunk: usize, pieces: usize) -> Unit {
        Unit { owner: Owner::of(job, chunk), src: vec![7; pieces] }
    }

    fn popped(lane: &mut Lane, heavy: bool) -> Option<(usize, usize)> {
        lane.pop(heavy, true).map(|(u, _)| (u.owner.request().0, u.src.len()))
    }

    #[test]
    fn the_request_with_the_fewest_pieces_admitted_goes_first() {
        let mut lane = Lane::default();
        // Two heavy requests of three 100-piece chunks each.
        for job in [0, 1] {
            for c in 0..3 {
                lane.push(unit(job, c, 100));
            }
        }
        assert_eq!(popped(&mut lane, true), Some((0, 100)));
        assert_eq!(popped(&mut lane, true), Some((1, 100)));
        // A one-sentence request arrives: it has had nothing, so it is next, before either.
        lane.push(unit(2, 0, 12));
        assert_eq!(popped(&mut lane, true), Some((2, 12)));
        assert_eq!(popped(&mut lane, true), Some((0, 100)));
        // Only light requests may take the places kept for them.
        lane.push(unit(3, 0, 10));
        lane.push(unit(3, 1, 10));
        assert_eq!(popped(&mut lane, false), Some((3, 10)));
        assert_eq!(popped(&mut lane, false), Some((3, 10)));
        assert_eq!(popped(&mut lane, false), None, "the heavy ones wait for a place of theirs");
        assert_eq!(popped(&mut lane, true), Some((1, 100)));
        assert_eq!(popped(&mut lane, true), Some((0, 100)));
        assert_eq!(popped(&mut lane, true), Some((1, 100)));
        assert_eq!(popped(&mut lane, true), None);
        assert!(lane.pending.is_empty());
    }

    #[test]
    fn of_requests_that_have_had_nothing_yet_the_smallest_goes_first() {
        let mut lane = Lane::default();
        for job in [0, 1] {
            for c in 0..3 {
                lane.push(unit(job, c, 128));
            }
        }
        lane.push(unit(2, 0, 9));
        assert_eq!(popped(&mut lane, true), Some((2, 9)), "behind no heavy request that came first");
        assert_eq!(popped(&mut lane, true), Some((0, 128)));
        assert_eq!(popped(&mut lane, true), Some((1, 128)));
        // Only heavy ones: the light one waits.
        lane.push(unit(3, 0, 9));
        assert_eq!(lane.pop(true, false).map(|(u, light)| (u.owner.request().0, light)), Some((0, false)));
        assert_eq!(popped(&mut lane, false), Some((3, 9)));
    }
}
