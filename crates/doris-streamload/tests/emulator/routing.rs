//! Where a load goes: unreachable BEs, the redirect allowlist, remembered and configured backends.

use crate::common::*;

#[tokio::test]
async fn an_unreachable_be_is_a_transport_error_and_loads_nothing() {
    let env = Env::new(DUP).await;
    env.emulator.faults().arm(Fault::BeUnreachable, 10);
    let mut config = env.config();
    config.retry.max_attempts = 3;
    config.allowlist.fe_host_any_port = true;
    let client = StreamLoadClient::new(config).unwrap();
    let b = batch(0, 10);
    let e = labeled(&client, &LoadOptions::default(), "unr1", b)
        .await
        .unwrap_err();
    assert!(
        matches!(e, StreamLoadError::Transport { attempts: 3, .. }),
        "{e}"
    );
    assert!(!e.may_have_loaded());
    assert_eq!(env.row_count("t"), 0);
}

#[tokio::test]
async fn a_redirect_outside_the_allowlist_is_refused_before_any_body_byte() {
    let env = Env::new(DUP).await;
    env.emulator.faults().arm(
        Fault::Redirect {
            host: "evil.example".into(),
            port: 8040,
        },
        1,
    );
    let e = load(&env, &LoadOptions::default(), "redir1", batch(0, 10))
        .await
        .unwrap_err();
    match &e {
        StreamLoadError::RedirectRefused { target, .. } => {
            assert!(target.starts_with("http://evil.example:8040/"), "{target}");
            assert!(!target.contains('@'), "userinfo kept: {target}");
        }
        other => panic!("{other}"),
    }
    assert_eq!(env.emulator.http_bytes_received().1, 0);
}

#[tokio::test]
async fn remembered_and_configured_backends_skip_the_fe() {
    let env = Env::new(DUP).await;
    let mut config = env.config();
    config.route = Route::ViaFe {
        remember_backend: true,
    };
    let client = StreamLoadClient::new(config).unwrap();
    for i in 0..3 {
        let b = batch(i * 10, 10);
        labeled(&client, &LoadOptions::default(), &format!("rem{i}"), b)
            .await
            .unwrap();
    }
    let (fe_after_three, _) = env.emulator.http_bytes_received();
    let mut config = env.config();
    config.route = Route::Backends(vec![
        format!("http://{}", env.emulator.be_http_addr())
            .parse()
            .unwrap(),
    ]);
    let direct = StreamLoadClient::new(config).unwrap();
    let b = batch(100, 10);
    labeled(&direct, &LoadOptions::default(), "direct1", b)
        .await
        .unwrap();
    let (fe_final, _) = env.emulator.http_bytes_received();
    assert_eq!(fe_final, fe_after_three, "the direct route touched the FE");
    // One FE redirect plus one /api/backends call served all three remembered loads.
    assert!(fe_after_three < 1_500, "{fe_after_three}");
    let requests: Vec<(HttpFace, String, String)> = env
        .emulator
        .http_requests()
        .into_iter()
        .map(|r| (r.face, r.method, r.path))
        .collect();
    let load = |face| (face, "PUT".to_owned(), "/api/d/t/_stream_load".to_owned());
    let fe_loads = requests
        .iter()
        .filter(|r| **r == load(HttpFace::Fe))
        .count();
    let be_loads = requests
        .iter()
        .filter(|r| **r == load(HttpFace::Be))
        .count();
    let backend_lists = requests
        .iter()
        .filter(|(face, method, path)| {
            *face == HttpFace::Fe && method == "GET" && path == "/api/backends"
        })
        .count();
    assert_eq!(
        (fe_loads, backend_lists, be_loads),
        (1, 1, 4),
        "{requests:?}"
    );
    assert_eq!(env.row_count("t"), 40);
}
