"""A stand-in for a Spark DataFrame in unit tests of code that projects a run's rows: its
columns, and each `selectExpr` projection asked of it."""


class RecordingFrame:
    def __init__(self, columns):
        self.columns = columns
        self.projections = []

    def selectExpr(self, *expressions):
        self.projections.append(expressions)
        return self
