# Sourced by slurm-submit.sh and parallel-tune.sh: their arguments are
# OUT SELECTION... [-- TUNE OPTIONS...]. split_args "$@" sets out, sel (the
# selection for `convtune layers --list` and `tune --job-index`) and opts (tune's
# options, with --threads 1 added unless given: one core measures per job);
# a missing OUT or selection calls the script's usage.
split_args() {
  [ $# -ge 2 ] || usage
  out=$1
  shift
  sel=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do sel+=("$1"); shift; done
  [ "${1:-}" != -- ] || shift
  opts=("$@")
  [ ${#sel[@]} -gt 0 ] || usage
  case " ${opts[*]-} " in *" --threads "* | *" --threads="*) ;; *) opts+=(--threads 1) ;; esac
}
