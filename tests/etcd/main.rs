//! ringd on etcd: access control, clients, a three-member cluster losing
//! its leader, outages, watch, concurrent writers, and the client library.

#[path = "../support/mod.rs"]
mod support;

mod access;
mod client;
mod clients;
mod cluster;
mod outage;
mod serve;
mod watch;
mod writers;
