// Package devcluster runs a local Caravan cluster on this machine: real Nomad
// agents (one combined agent, or a server with N clients) with the caravan
// driver loaded from bin/plugins and simulated GPUs, and optionally a Consul
// dev agent wired to them. It is product code, like Nomad's own dev mode:
// `make demo` (cmd/caravan-demo) starts one, and the end-to-end tests use it
// through the thin wrapper in e2e/harness.
//
// Everything binds to 127.0.0.1 on ports the kernel hands out, and lives in
// one directory (configs, data dirs and each agent's log), so several
// clusters can run side by side.
package devcluster
