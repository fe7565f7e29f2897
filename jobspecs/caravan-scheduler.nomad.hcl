# The caravan scheduler, run by Nomad itself. Two instances: one leads (it
# holds the Nomad Variables lock caravan/scheduler/lock), the other stands by
# and takes over within lock TTL + delay if the leader dies.
#
# The API (GET /v1/queue, /metrics) takes a bearer token, so it is served
# over TLS: the token never crosses the network in clear text.
#
# Before the first run:
#   1. the API token and a TLS certificate and key (PEM) for the scheduler's
#      address, readable by this job's workload identity (the same CA signs
#      what `caravan queue -ca-cert` trusts; Nomad's own CA may be used):
#        nomad var put nomad/jobs/caravan-scheduler api_token=$(uuidgen) \
#          tls_cert=@scheduler.pem tls_key=@scheduler-key.pem
#      (-var tls=false serves plain HTTP: only on a trusted network.)
#   2. with ACLs on, the scheduler's policy on the job's identity:
#        nomad acl policy apply -namespace default -job caravan-scheduler \
#          caravan-scheduler scheduler/live/acl-policy.hcl
#   nomad job run -var caravan=$PWD/bin/caravan jobspecs/caravan-scheduler.nomad.hcl
# Then, with an address:port that `nomad service info caravan-scheduler`
# prints (a standby answers too, saying it does not lead):
#   caravan queue -addr 10.0.0.5:27493 -ca-cert ca.pem
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

variable "tls" {
  type        = bool
  default     = true
  description = "Serve the API over HTTPS with tls_cert/tls_key from the job's Variable."
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
        args = concat(["scheduler", "-policy", var.policy, "-quantum", var.quantum,
          "-listen", "${NOMAD_ADDR_api}"],
        var.tls ? ["-tls-cert", "${NOMAD_SECRETS_DIR}/api.pem", "-tls-key", "${NOMAD_SECRETS_DIR}/api-key.pem"] : [])
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

      dynamic "template" {
        for_each = var.tls ? { "api.pem" = "tls_cert", "api-key.pem" = "tls_key" } : {}
        content {
          data        = "{{ with nomadVar \"nomad/jobs/caravan-scheduler\" }}{{ .${template.value} }}{{ end }}"
          destination = "secrets/${template.key}"
          perms       = "0600"
        }
      }

      # SIGTERM: the leader releases its lock at once, so the standby
      # takes over without waiting out the lock's TTL.
      kill_timeout = "10s"

      resources {
        cpu    = 200
        memory = 128
      }
    }
  }
}
