//! Tests of the whole pipeline: the sentence-splitting table, properties over generated posts,
//! and the fixture's 200 posts.

pub(crate) mod fixture;
mod pipeline;
mod props;
mod split_table;
