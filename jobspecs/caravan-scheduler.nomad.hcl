# The caravan scheduler, run by Nomad itself. Two instances: one leads (it
# holds the Nomad Variables lock caravan/scheduler/lock), the other stands by
# and takes over within lock TTL + delay if the leader dies.
#
# Before the first run:
#   1. the API bearer token, readable by this job's workload identity:
#        nomad var put nomad/jobs/caravan-scheduler api_token=$(uuidgen)
#   2. with ACLs on, the scheduler's policy on the job's identity:
#        nomad acl policy apply -namespace default -job caravan-scheduler \
#          caravan-scheduler scheduler/live/acl-policy.hcl
#   nomad job run -var caravan=$PWD/bin/caravan jobspecs/caravan-scheduler.nomad.hcl
variable "caravan" {
  type        = string
  default     = "/usr/local/bin/caravan"
  description = "Path of the caravan CLI on the clients."
}

variable "policy" {
  type    = string
  default = "tiresias-las"
}

variable "quantum" {
  type    = string
  default = "10s"
}

job "caravan-scheduler" {
  type      = "service"
  node_pool = "default" # never the queue pool it manages

  group "scheduler" {
    count = 2

    # Two instances on one node would contend for nothing but the lock;
    # spread them so a node loss leaves a standby.
    constraint {
      operator = "distinct_hosts"
      value    = "true"
    }

    network {
      port "api" {}
    }

    service {
      name     = "caravan-scheduler"
      port     = "api"
      provider = "nomad"
    }

    task "scheduler" {
      driver = "raw_exec"

      config {
        command = var.caravan
        args = ["scheduler", "-policy", var.policy, "-quantum", var.quantum,
        "-listen", "${NOMAD_ADDR_api}"]
      }

      # NOMAD_TOKEN from the workload identity; the Task API socket is the
      # Nomad API with that identity's ACL policy.
      identity {
        env = true
      }

      env {
        NOMAD_ADDR = "unix://${NOMAD_SECRETS_DIR}/api.sock"
      }

      template {
        data        = <<-EOT
        {{ with nomadVar "nomad/jobs/caravan-scheduler" }}CARAVAN_SCHEDULER_TOKEN={{ .api_token }}{{ end }}
        EOT
        destination = "secrets/scheduler.env"
        env         = true
      }

      kill_timeout = "10s"

      resources {
        cpu    = 200
        memory = 128
      }
    }
  }
}
