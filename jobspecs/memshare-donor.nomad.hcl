# A data-preparation job that lends its reserved-but-unused memory (memshare).
# Each instance reserves `memory` MiB, uses a few, and with memory_donor = true
# the caravan driver on its node lends the rest (minus the plugin's headroom)
# to tasks with remote_memory. The node's plugin config needs a memshare block.
#   nomad job run -var workloads=$PWD/workloads jobspecs/memshare-donor.nomad.hcl
variable "workloads" {
  type    = string
  default = "/opt/caravan/workloads"
}

variable "python" {
  type    = string
  default = "/usr/bin/python3"
}

variable "count" {
  type    = number
  default = 2
}

variable "memory" {
  type        = number
  default     = 512
  description = "MiB reserved per instance; what it does not use is lent."
}

variable "seconds" {
  type    = number
  default = 600
}

variable "grow_mib" {
  type        = number
  default     = 0
  description = "On SIGUSR1 (nomad alloc signal -s SIGUSR1) take this much more memory: memshare reclaims."
}

job "memshare-donor" {
  type = "batch"

  group "prep" {
    count = var.count

    # One donor per node: a stripe's slabs must sit on distinct nodes.
    constraint {
      operator = "distinct_hosts"
      value    = "true"
    }

    restart {
      attempts = 0
      mode     = "fail"
    }

    task "prep" {
      driver = "caravan"

      config {
        command      = var.python
        args         = ["${var.workloads}/memshare_donor.py", "--seconds", "${var.seconds}", "--grow-mib", "${var.grow_mib}"]
        memory_donor = true
      }

      resources {
        cpu    = 100
        memory = var.memory
      }
    }
  }
}
