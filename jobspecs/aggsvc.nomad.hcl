# Caravan's shared gradient-aggregation service (aggsvc). Many training jobs'
# gradient sums time-share its pool of cores. It registers itself in Consul as
# `caravan-aggsvc` (health check, load in the service meta), where the caravan
# driver finds it for tasks with `aggregator = "caravan-aggsvc"`; the group's
# service block registers the metrics endpoint for Prometheus.
#
# The token signing key lives in a Nomad Variable; the caravan plugins need the
# same key (plugin config `aggregator_key`, or $CARAVAN_AGGSVC_KEY):
#   nomad var put nomad/jobs/caravan-aggsvc key=$(openssl rand -hex 32)
#   nomad job run -var caravan=$PWD/bin/caravan jobspecs/aggsvc.nomad.hcl
variable "caravan" {
  type        = string
  default     = "/usr/local/bin/caravan"
  description = "The caravan binary."
}

variable "consul_addr" {
  type        = string
  default     = "127.0.0.1:8500"
  description = "Consul HTTP address the service registers with."
}

variable "host" {
  type        = string
  default     = ""
  description = "Address to bind and advertise; empty means the node's (NOMAD_IP_agg). 127.0.0.1 keeps a one-node demo on loopback."
}

variable "cores" {
  type        = number
  default     = 2
  description = "Summation pool shared by all jobs."
}

variable "step_timeout" {
  type    = string
  default = "30s"
}

job "caravan-aggsvc" {
  type = "service"

  group "aggsvc" {
    count = 1

    network {
      port "agg" {}
      port "http" {}
    }

    service {
      name     = "caravan-aggsvc-metrics"
      port     = "http"
      provider = "consul"
      address  = var.host # "" means the port's own address

      check {
        type     = "http"
        path     = "/healthz"
        interval = "5s"
        timeout  = "2s"
      }
    }

    task "aggsvc" {
      driver = "raw_exec"

      config {
        command = var.caravan
        args = ["aggsvc",
          "-listen", var.host == "" ? "$${NOMAD_ADDR_agg}" : "${var.host}:$${NOMAD_PORT_agg}",
          "-http", var.host == "" ? "$${NOMAD_ADDR_http}" : "${var.host}:$${NOMAD_PORT_http}",
          "-cores", "${var.cores}", "-step-timeout", var.step_timeout,
        "-consul", "-consul-addr", var.consul_addr]
      }

      template {
        data        = <<-EOT
        {{ with nomadVar "nomad/jobs/caravan-aggsvc" }}CARAVAN_AGGSVC_KEY={{ .key }}{{ end }}
        EOT
        destination = "secrets/aggsvc.env"
        env         = true
      }

      kill_timeout = "10s"

      resources {
        cpu    = 2000
        memory = 1024
      }
    }
  }
}
