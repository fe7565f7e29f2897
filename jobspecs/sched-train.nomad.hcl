# A job for the caravan scheduler: submitted into the caravan-queue node pool,
# where Nomad holds it (`nomad job status` shows it pending) until the
# scheduler admits it, pinned to the node and GPU its policy chose.
# `caravan queue` shows why it waits, its rank and its service.
# Each worker group is one worker of the gang; all are admitted together.
# Three ways to write an N-worker gang, all the same to the scheduler:
#   - one group per worker (below);
#   - one group with count = N (split at admission into groups
#     "<group>-0" … "<group>-N-1");
#   - dynamic "group" { for_each = range(N) ... } over one template.
# Every worker gets RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR and MASTER_PORT
# (as torchrun gives them), so a PyTorch DDP script needs no glue.
#   nomad job run -var workloads=$PWD/workloads jobspecs/sched-train.nomad.hcl
variable "workloads" {
  type    = string
  default = "/opt/caravan/workloads"
}

variable "seconds" {
  type        = number
  default     = 60
  description = "Seconds of work; progress survives preemption."
}

job "sched-train" {
  type      = "batch"
  node_pool = "caravan-queue"

  # Where the scheduler admits it (default "default").
  meta = {
    "caravan.pool" = "default"
  }

  group "worker-0" {
    restart {
      attempts = 0
      mode     = "fail"
    }

    task "work" {
      driver = "caravan"

      # On preemption: SIGTERM, then this long to checkpoint.
      kill_signal  = "SIGTERM"
      kill_timeout = "30s"

      config {
        command      = "/usr/bin/python3"
        args         = ["${var.workloads}/sched_work.py", "--seconds", "${var.seconds}"]
        gpu_fraction = 0.5
        gpu_memory   = "8GiB"
      }

      resources {
        cpu    = 100
        memory = 128
      }
    }
  }

  group "worker-1" {
    restart {
      attempts = 0
      mode     = "fail"
    }

    task "work" {
      driver       = "caravan"
      kill_signal  = "SIGTERM"
      kill_timeout = "30s"

      config {
        command      = "/usr/bin/python3"
        args         = ["${var.workloads}/sched_work.py", "--seconds", "${var.seconds}"]
        gpu_fraction = 0.5
        gpu_memory   = "8GiB"
      }

      resources {
        cpu    = 100
        memory = 128
      }
    }
  }
}
