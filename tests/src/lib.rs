//! Helpers shared by the end-to-end tests, the demo and the fixture recorder.
#![forbid(unsafe_code)]
