//! Conformance: client acks are kept per ring and client, replaced by a
//! newer ack, hidden once expired and deleted with their ring.

use std::sync::Arc;

use ringd::placement::Fingerprint;
use ringd::ring::{ApplyFailure, ClientAck, ClientId, ClientKind};
use ringd::store::{Store, StoreError};

use super::{at, chain, first, name, store_all};

/// An ack by `client` of `version`, seen at `at(seen)`, live for a minute.
fn ack(client: &str, version: u64, fingerprint: Fingerprint, seen: i64) -> ClientAck {
    ClientAck {
        client_id: ClientId::new(client).expect("valid client id"),
        version,
        fingerprint,
        last_seen: at(seen),
        expires_at: at(seen + 60),
        kind: ClientKind::Library,
        failure: None,
    }
}

pub(crate) async fn client_acks(store: Arc<dyn Store>) {
    let versions = chain("cache", 3);
    store_all(&*store, &versions).await;
    let (other, _) = first("other");
    store.create_ring(&other).await.unwrap();
    let cache = name("cache");
    let fp = |v: usize| versions[v - 1].fingerprint;

    let web_b = ack("web-b", 3, fp(3), 0);
    let web_a = ack("web-a", 1, fp(2), 5);
    store.put_ack(&cache, &web_b).await.unwrap();
    store.put_ack(&cache, &web_a).await.unwrap();
    let elsewhere = ack("web-a", 1, other.fingerprint, 0);
    store.put_ack(&name("other"), &elsewhere).await.unwrap();
    assert_eq!(
        store.list_acks(&cache, at(30)).await.unwrap(),
        vec![web_a.clone(), web_b.clone()],
        "sorted by client id, times exact"
    );
    assert_eq!(
        store.list_acks(&name("other"), at(30)).await.unwrap(),
        vec![elsewhere.clone()]
    );

    // A newer ack replaces the client's previous one.
    let web_a2 = ack("web-a", 3, fp(3), 10);
    store.put_ack(&cache, &web_a2).await.unwrap();
    assert_eq!(
        store.list_acks(&cache, at(30)).await.unwrap(),
        vec![web_a2.clone(), web_b.clone()]
    );
    // A proxy's ack keeps its kind and the version it could not apply,
    // text as sent (a proxy's message, with quotes and a newline); its
    // next ack, on the newer version, clears the failure.
    let failing = ClientAck {
        kind: ClientKind::Proxy,
        failure: Some(ApplyFailure {
            version: 3,
            error: "nginx: [emerg] unexpected \"}\" in /etc/nginx/ringd.conf:7\nnginx: configuration file test failed".into(),
        }),
        ..ack("nginx-1", 2, fp(2), 0)
    };
    store.put_ack(&cache, &failing).await.unwrap();
    assert_eq!(
        store.list_acks(&cache, at(30)).await.unwrap(),
        vec![failing.clone(), web_a2.clone(), web_b.clone()]
    );
    let recovered = ClientAck {
        kind: ClientKind::Proxy,
        ..ack("nginx-1", 3, fp(3), 0)
    };
    store.put_ack(&cache, &recovered).await.unwrap();
    assert_eq!(
        store.list_acks(&cache, at(30)).await.unwrap(),
        vec![recovered.clone(), web_a2.clone(), web_b.clone()]
    );

    // An ack is live strictly before `expires_at`.
    assert_eq!(
        store.list_acks(&cache, at(60)).await.unwrap(),
        vec![web_a2.clone()]
    );
    assert_eq!(store.list_acks(&cache, at(70)).await.unwrap(), vec![]);

    // No acks for a ring that does not exist.
    let err = store
        .put_ack(&name("missing"), &ack("web-a", 1, fp(1), 0))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, StoreError::RingNotFound(r) if *r == name("missing")),
        "{err:?}"
    );
    assert_eq!(
        store.list_acks(&name("missing"), at(0)).await.unwrap(),
        vec![]
    );

    // Deleting a ring deletes its acks, and only its own.
    store.delete_ring(&cache, None).await.unwrap();
    assert_eq!(store.list_acks(&cache, at(30)).await.unwrap(), vec![]);
    let err = store.put_ack(&cache, &web_b).await.unwrap_err();
    assert!(matches!(err, StoreError::RingNotFound(_)), "{err:?}");
    store.create_ring(&versions[0]).await.unwrap();
    assert_eq!(store.list_acks(&cache, at(30)).await.unwrap(), vec![]);
    assert_eq!(
        store.list_acks(&name("other"), at(30)).await.unwrap(),
        vec![elsewhere]
    );
}
