# The least Nomad ACL policy the caravan scheduler needs.
#   nomad acl policy apply -description "caravan scheduler" caravan-scheduler scheduler/live/acl-policy.hcl
#   nomad acl token create -name caravan-scheduler -policy caravan-scheduler   # → NOMAD_TOKEN
# Run as a Nomad job (jobspecs/caravan-scheduler.nomad.hcl), attach it to the
# job's workload identity instead of minting a token:
#   nomad acl policy apply -namespace default -job caravan-scheduler caravan-scheduler scheduler/live/acl-policy.hcl

namespace "default" {
  # list-jobs/read-job: the queue and the event stream (Job, Evaluation and
  # Allocation topics); submit-job: admission and preemption rewrites (CAS);
  # alloc-lifecycle: stopping a preempted job's allocations; read-fs:
  # reading running tasks' progress files (alloc/caravan/*.progress.jsonl).
  capabilities = ["list-jobs", "read-job", "submit-job", "alloc-lifecycle", "read-fs"]

  # State and the leader lock.
  variables {
    path "caravan/scheduler/*" {
      capabilities = ["read", "write", "list"]
    }
    # State parts (a state over 48 KiB is split over Variables named by
    # generation): after a save, the previous generation's parts and those
    # of writers that lost or crashed are deleted. The most specific path
    # wins, so this rule repeats the others.
    path "caravan/scheduler/state/part/*" {
      capabilities = ["read", "write", "list", "destroy"]
    }
  }
}

# Node fingerprints (GPU UUIDs and free shares) and the Node event topic.
node {
  policy = "read"
}

# Creating the queue pool on first start; reading the pools jobs go to.
node_pool "caravan-queue" {
  policy = "write"
}

node_pool "*" {
  policy = "read"
}
