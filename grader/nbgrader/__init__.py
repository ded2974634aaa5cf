"""Grading a class with nbgrader: the course directory (``course``), the preprocessor that regrades every
kernel in the judge (``judge``; configs name it ``grader.nbgrader.judge.JudgeChecks``), grading in shards over
several GPUs or a Slurm cluster (``shards``), and where grading may run (``placement``)."""
