#!/usr/bin/env bash
# Starts a real Redis Cluster on 127.0.0.1 for redisstore's tests: 3 masters
# with one replica each (6 redis-server processes, Debian's redis-server and
# redis-cli, installed when missing), made with
# `redis-cli --cluster create ... --cluster-replicas 1`, and waits until every
# node says cluster_state:ok and every master has its replica.
#
#   bash scripts/redis-cluster.sh start DIR   # prints the 6 addresses, comma-separated
#   REDIS_ADDR=$(cat DIR/addrs) go test -C redisstore -race ./...
#   bash scripts/redis-cluster.sh stop DIR
#
# DIR holds each node's log, its nodes.conf and its pid. The nodes keep no
# data on disk (no RDB, no append-only file). They run with
# cluster-node-timeout 3000 (a dead master is failed over in about 4 s) and
# cluster-require-full-coverage no, so that the masters that are up keep
# serving their slots while a failed master's replica is promoted: what
# redisstore's README recommends. .ci/run calls it; so can you.
set -euo pipefail

cmd=${1:-}; dir=${2:-}
[ -n "$cmd" ] && [ -n "$dir" ] || { echo "usage: $0 start|stop DIR" >&2; exit 2; }

stop() {
  [ -d "$dir" ] || return 0
  for f in "$dir"/*.pid; do
    [ -e "$f" ] || continue
    pid=$(cat "$f")
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
    kill -9 "$pid" 2>/dev/null || true
    rm -f "$f"
  done
}

if [ "$cmd" = stop ]; then stop; exit 0; fi
[ "$cmd" = start ] || { echo "usage: $0 start|stop DIR" >&2; exit 2; }

if ! command -v redis-server >/dev/null || ! command -v redis-cli >/dev/null; then
  echo "-- installing Debian's redis-server (and redis-cli)" >&2
  as_root=""; [ "$(id -u)" -ne 0 ] && as_root="sudo"
  $as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q redis-server >/dev/null 2>&1 || {
    $as_root apt-get update -q >/dev/null
    $as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q redis-server >/dev/null
  }
fi

mkdir -p "$dir"
stop # a cluster left in DIR by an earlier start
rm -f "$dir"/nodes-*.conf "$dir"/*.log "$dir"/addrs

# The ports are chosen below the kernel's range of ephemeral ports, with
# their bus ports (+10000) below it too: a port in that range may be taken
# at any moment by a client's connection (the suite makes thousands), which
# no check made beforehand can see, and redis-server then fails to bind it.
ephemeral_low=$(awk '{print $1}' /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
span=$((ephemeral_low - 10000 - 10000)) # p in [10000, ephemeral_low - 10000)
[ "$span" -ge 1000 ] || { ephemeral_low=32768; span=12768; }
free() { # a port of 127.0.0.1 on which nothing answers, nor on its cluster bus port (+10000),
  # neither of them a port or a bus port already chosen ($dir/ports holds both of each)
  for _ in $(seq 200); do
    local p=$((10000 + (RANDOM * 32768 + RANDOM) % span))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null && ! (exec 3<>"/dev/tcp/127.0.0.1/$((p + 10000))") 2>/dev/null &&
      ! grep -qx -e "$p" -e "$((p + 10000))" "$dir/ports" 2>/dev/null; then
      printf '%s\n%s\n' "$p" "$((p + 10000))" >>"$dir/ports"; echo "$p"; return 0
    fi
  done
  echo "no free port for redis-server" >&2; return 1
}

rm -f "$dir/ports"
ports=()
for _ in 1 2 3 4 5 6; do ports+=("$(free)"); done
rm -f "$dir/ports"
start_node() { # starts a node on port $1 and reports whether it answers
  local p=$1
  redis-server --port "$p" --bind 127.0.0.1 --save '' --appendonly no --daemonize no \
    --cluster-enabled yes --cluster-config-file "$dir/nodes-$p.conf" --cluster-node-timeout 3000 \
    --cluster-require-full-coverage no --dir "$dir" --logfile "$dir/$p.log" </dev/null >/dev/null 2>&1 &
  local pid=$!
  echo "$pid" >"$dir/$p.pid"
  for _ in $(seq 200); do
    redis-cli -p "$p" ping >/dev/null 2>&1 && return 0
    kill -0 "$pid" 2>/dev/null || break # it exited: its port was taken after all
    sleep 0.05
  done
  redis-cli -p "$p" ping >/dev/null 2>&1
}
for i in "${!ports[@]}"; do
  for try in 1 2 3; do
    p=${ports[$i]}
    start_node "$p" && break
    if [ "$try" -eq 3 ]; then echo "redis-server on port $p did not start:" >&2; cat "$dir/$p.log" >&2; stop; exit 1; fi
    kill "$(cat "$dir/$p.pid")" 2>/dev/null || true
    rm -f "$dir/$p.pid" "$dir/nodes-$p.conf"
    printf '%s\n' "${ports[@]}" | awk '{print; print $1 + 10000}' >"$dir/ports"
    ports[$i]=$(free) # another port for this node
    rm -f "$dir/ports"
  done
done

addrs=(); for p in "${ports[@]}"; do addrs+=("127.0.0.1:$p"); done
if ! redis-cli --cluster create "${addrs[@]}" --cluster-replicas 1 --cluster-yes >"$dir/create.log" 2>&1; then
  echo "redis-cli --cluster create failed:" >&2; cat "$dir/create.log" >&2; stop; exit 1
fi

# Ready: every node sees the cluster ok, 6 known nodes, and 3 masters that
# each have a connected replica.
ready() {
  for p in "${ports[@]}"; do
    local info; info=$(redis-cli -p "$p" cluster info 2>/dev/null) || return 1
    grep -q '^cluster_state:ok' <<<"$info" || return 1
    grep -q '^cluster_known_nodes:6' <<<"$info" || return 1
  done
  local masters=0
  for p in "${ports[@]}"; do
    local repl; repl=$(redis-cli -p "$p" info replication 2>/dev/null) || return 1
    if grep -q '^role:master' <<<"$repl"; then
      grep -q '^connected_slaves:1' <<<"$repl" || return 1
      masters=$((masters + 1))
    else
      grep -q '^master_link_status:up' <<<"$repl" || return 1
    fi
  done
  [ "$masters" -eq 3 ]
}
for _ in $(seq 600); do ready && break; sleep 0.1; done
ready || { echo "the cluster did not become ready within 60s:" >&2; for p in "${ports[@]}"; do redis-cli -p "$p" cluster info >&2 || true; done; stop; exit 1; }

(IFS=,; echo "${addrs[*]}") | tee "$dir/addrs"
