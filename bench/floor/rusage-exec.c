/* rusage-exec OUTFILE CMD [ARG...]: run CMD, write "<max RSS KiB> <wait status>
 * <user CPU us> <system CPU us>" to OUTFILE, exit with CMD's status.
 *
 * bench/run spawns the tracers through this small (static) helper because a
 * process forked from Python inherits Python's page counts, and Linux keeps
 * the pre-exec high-water mark in ru_maxrss: ~18 MiB of harness would be
 * billed to every tool. SIGINT/SIGTERM are ignored here; the harness signals
 * the whole process group, so CMD still gets them. */
#include <signal.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: rusage-exec OUTFILE CMD [ARG...]\n");
		return 2;
	}
	pid_t pid = fork();
	if (pid < 0) {
		perror("rusage-exec: fork");
		return 127;
	}
	if (pid == 0) {
		execvp(argv[2], argv + 2);
		perror(argv[2]);
		_exit(127);
	}
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	int status;
	struct rusage ru;
	while (wait4(pid, &status, 0, &ru) < 0)
		;
	FILE *f = fopen(argv[1], "w");
	if (f) {
		fprintf(f, "%ld %d %lld %lld\n", ru.ru_maxrss, status,
			(long long)ru.ru_utime.tv_sec * 1000000 + ru.ru_utime.tv_usec,
			(long long)ru.ru_stime.tv_sec * 1000000 + ru.ru_stime.tv_usec);
		fclose(f);
	}
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}
