"""What a crash leaves and how it is judged: shared by the crash and crash-state-explorer measurements.

* :mod:`.fs_model`: a model of the disk learned from a writer's own file-system calls, as a power loss plays it;
* :mod:`.oplog`: those calls as logical operations, replayable in any order POSIX allows;
* :mod:`.images`: crash images written out as store roots;
* :mod:`.recovery`: recovering a crashed session as an agent would, and an entry's identity;
* :mod:`.judge`: what a strategy's durability promise allows a crash to lose.
"""
