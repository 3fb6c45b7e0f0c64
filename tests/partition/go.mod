module ringd/tests/partition

go 1.16

require github.com/anishathalye/porcupine v1.3.1
