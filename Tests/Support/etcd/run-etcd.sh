#!/bin/sh
# Starts one etcd member on loopback ports for the fleet tests, and always stops it.
#
# usage: run-etcd.sh NAME DIR CLIENT_PORT PEER_PORT INITIAL_CLUSTER [new|existing]
#
# With ETCD_TLS_DIR set, clients speak TLS (https://) and must present a certificate: the
# directory holds ca.crt, server.crt, server.key, client.crt and client.key.
# Data and logs go to DIR (removed when the member stops for good: a file DIR/remove-when-stopped
# says so, or the owner has exited). Prints "ready PID" (etcd's process id) once the member answers
# /health, or "failed" with the end of its log on standard error. etcd is stopped when this
# script gets SIGTERM/SIGINT/SIGHUP, and also when the process that started the script
# exits (a test run that crashed leaves no etcd behind).
set -u
name=$1 dir=$2 client=$3 peer=$4 cluster=$5 state=${6:-new}
owner=$PPID
mkdir -p "$dir"
scheme=http
set --
if [ -n "${ETCD_TLS_DIR:-}" ]; then
    scheme=https
    set -- --cert-file "$ETCD_TLS_DIR/server.crt" --key-file "$ETCD_TLS_DIR/server.key" \
        --trusted-ca-file "$ETCD_TLS_DIR/ca.crt" --client-cert-auth
fi
etcd --name "$name" --data-dir "$dir/data" "$@" \
    --listen-client-urls "$scheme://127.0.0.1:$client" --advertise-client-urls "$scheme://127.0.0.1:$client" \
    --listen-peer-urls "http://127.0.0.1:$peer" --initial-advertise-peer-urls "http://127.0.0.1:$peer" \
    --initial-cluster "$cluster" --initial-cluster-state "$state" --initial-cluster-token keysmith-test \
    --heartbeat-interval 50 --election-timeout 500 >>"$dir/etcd.log" 2>&1 &
pid=$!
stop() {
    kill -TERM "$pid" 2>/dev/null
    # A member without quorum can take a while to stop: 5 s, then SIGKILL.
    waited=0
    while kill -0 "$pid" 2>/dev/null && [ "$waited" -lt 50 ]; do
        sleep 0.1
        waited=$((waited + 1))
    done
    kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    # The cluster is done with this member (or its owner is gone): remove its data, and the
    # cluster's directory once it is empty. A member stopped for a restart keeps its data.
    if [ -e "$dir/remove-when-stopped" ] || ! kill -0 "$owner" 2>/dev/null; then
        rm -rf "$dir"
        rmdir "$(dirname "$dir")" 2>/dev/null
    fi
    exit 0
}
trap stop TERM INT HUP
tries=0
health() {
    if [ "$scheme" = https ]; then
        curl -sf -m 1 --cacert "$ETCD_TLS_DIR/ca.crt" --cert "$ETCD_TLS_DIR/client.crt" \
            --key "$ETCD_TLS_DIR/client.key" "https://127.0.0.1:$client/health" >/dev/null 2>&1
    else
        curl -sf -m 1 "http://127.0.0.1:$client/health" >/dev/null 2>&1
    fi
}
until health; do
    if ! kill -0 "$pid" 2>/dev/null; then
        echo "failed"
        tail -n 5 "$dir/etcd.log" >&2
        exit 1
    fi
    tries=$((tries + 1))
    if [ "$tries" -gt 300 ]; then
        echo "failed"
        tail -n 5 "$dir/etcd.log" >&2
        stop
    fi
    sleep 0.1 &
    wait $!
done
echo "ready $pid"
while kill -0 "$owner" 2>/dev/null && kill -0 "$pid" 2>/dev/null; do
    sleep 0.5 &
    wait $!
done
stop
