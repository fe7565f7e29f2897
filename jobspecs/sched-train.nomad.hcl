# A job for the caravan scheduler: submitted into the caravan-queue node pool,
# where Nomad holds it until the scheduler admits it (pinned to the node and
# GPU its policy chose). `nomad job status sched-train` shows the reason it
# waits in the meta key caravan.reason; `caravan queue` shows the whole queue.
# Each group is one worker of the gang; all are admitted together.
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
