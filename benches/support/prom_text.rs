//! Reading counters out of a Prometheus text exposition (etcd's
//! `/metrics`), so a load tool can report a server's rates as the
//! difference of two scrapes.

/// The sum of every series of metric `name` whose label set contains
/// `label` (written as in the exposition, `grpc_method="LeaseKeepAlive"`;
/// `None` for every series), or `None` when no series matched.
pub(crate) fn sum(text: &str, name: &str, label: Option<&str>) -> Option<f64> {
    let mut total = None;
    for line in text.lines() {
        let Some(rest) = line.strip_prefix(name) else {
            continue;
        };
        // `etcd_mvcc_put_total` must not match `etcd_mvcc_put_total_x`.
        let (labels, value) = match rest.chars().next() {
            Some('{') => match rest.split_once('}') {
                Some((labels, value)) => (labels, value),
                None => continue,
            },
            Some(' ') => ("", rest),
            _ => continue,
        };
        if label.is_some_and(|l| !labels.contains(l)) {
            continue;
        }
        // A sample may carry a timestamp after its value.
        if let Some(v) = value
            .split_whitespace()
            .next()
            .and_then(|v| v.parse::<f64>().ok())
        {
            *total.get_or_insert(0.0) += v;
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::sum;

    const TEXT: &str = "# HELP etcd_mvcc_put_total Total number of puts seen by this member.\n\
        # TYPE etcd_mvcc_put_total counter\n\
        etcd_mvcc_put_total 1234\n\
        etcd_mvcc_put_total_other 7\n\
        grpc_server_msg_received_total{grpc_method=\"LeaseKeepAlive\",grpc_service=\"etcdserverpb.Lease\",grpc_type=\"bidi_stream\"} 40\n\
        grpc_server_msg_received_total{grpc_method=\"Txn\",grpc_service=\"etcdserverpb.KV\",grpc_type=\"unary\"} 2\n\
        grpc_server_msg_received_total{grpc_method=\"LeaseKeepAlive\",grpc_service=\"other\"} 2.5 1700000000\n";

    #[test]
    fn sums_the_series_of_one_name() {
        assert_eq!(sum(TEXT, "etcd_mvcc_put_total", None), Some(1234.0));
        assert_eq!(
            sum(TEXT, "grpc_server_msg_received_total", None),
            Some(44.5)
        );
        assert_eq!(
            sum(
                TEXT,
                "grpc_server_msg_received_total",
                Some("grpc_method=\"LeaseKeepAlive\"")
            ),
            Some(42.5)
        );
        assert_eq!(sum(TEXT, "etcd_mvcc_txn_total", None), None);
    }
}
