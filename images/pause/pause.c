/*
 * kite's pause container: PID 1 of every pod sandbox. It holds the pod's namespaces open, reaps
 * children that get re-parented to it (shared PID namespace), and exits 0 on SIGTERM or SIGINT.
 * Built static (gcc -static -Os) so the image needs nothing else.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t stopping = 0;

static void on_stop(int sig) {
	(void)sig;
	stopping = 1;
}

static void on_child(int sig) {
	(void)sig;
	int saved = errno;
	while (waitpid(-1, NULL, WNOHANG) > 0) {
	}
	errno = saved;
}

static int handle(int sig, void (*fn)(int)) {
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = fn;
	sa.sa_flags = sig == SIGCHLD ? SA_NOCLDSTOP | SA_RESTART : 0;
	sigemptyset(&sa.sa_mask);
	return sigaction(sig, &sa, NULL);
}

int main(int argc, char **argv) {
	if (argc > 1 && strcmp(argv[1], "-v") == 0) {
		puts("kite pause 3.10");
		return 0;
	}
	if (getpid() != 1)
		fputs("pause: warning: not running as PID 1\n", stderr);
	if (handle(SIGTERM, on_stop) || handle(SIGINT, on_stop) || handle(SIGCHLD, on_child)) {
		perror("pause: sigaction");
		return 1;
	}
	while (!stopping)
		pause();
	return 0;
}
