# args.sh - the options the experiments share, sourced by each script:
#   experiment_args NAME "$@"
# sets QUICK (1 with --quick) and OUT (-o DIR, default
# ./experiments-out/NAME); -h prints the script's "# usage:" lines.
usage() { sed -n 's/^# usage: /usage: /p; s/^#   \(-.*\)/  \1/p' "$0"; }
experiment_args() {
  QUICK=0
  OUT=./experiments-out/$1
  shift
  while [ $# -gt 0 ]; do
    case $1 in
      --quick) QUICK=1 ;;
      -o) [ $# -ge 2 ] || { usage >&2; exit 2; }; OUT=$2; shift ;;
      -h | --help) usage; exit 0 ;;
      *) usage >&2; exit 2 ;;
    esac
    shift
  done
}
